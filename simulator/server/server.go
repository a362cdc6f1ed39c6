package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/simulator/telemetry"
	"github.com/valyala/fasthttp"
)

// Options configures a Server.
type Options struct {
	Models    *ModelsFile
	Responder *Responder
	// APIKey, when set, is required as a Bearer token on /v1 and /admin.
	APIKey string
	// AllowedMediaHosts are the hosts (names or addresses, any port) image
	// URLs are fetched from wherever they point; others only on public
	// addresses.
	AllowedMediaHosts []string
	// MaxBodyBytes bounds a request body (default 32 MiB), and
	// MaxBodyBytesInFlight the bodies being read and answered at once
	// (default 96 MiB, three of the largest bodies; see admitBody).
	MaxBodyBytes, MaxBodyBytesInFlight int
	// HeaderTimeout bounds the wait for a request's headers from its first
	// byte (default 10 s); a client that trickles them gets 408, as nginx
	// answers after client_header_timeout. The body then has 60 s.
	HeaderTimeout time.Duration
	// Replica, when set, is this server's place in a fleet of independent
	// replicas (knee sim --replicas): /metrics/summary says which it is.
	Replica *Replica
	// ProfileDir, when set, serves POST /start_profile and /stop_profile:
	// a CPU profile of the simulator between them, written there.
	ProfileDir string
}

// Replica identifies one server of a fleet.
type Replica struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// model is one served model at run time.
type model struct {
	spec   ModelSpec
	engine Engine
	sched  *Scheduler
	// power is its GPUs' energy meter, when its hardware gives power.
	power     *powerMeter
	mm        *telemetry.ModelMetrics
	sum       *telemetry.Summary
	steps     *telemetry.StepSummary
	faults    faults
	inflight  atomic.Int64
	wantIDs   bool
	schedConf sched.Config
	// encoded is the vision encoder's cache (a vision model's).
	encoded EncoderCache
	// metrics is the server's, for the series a model sets itself
	// (vllm:lora_requests_info).
	metrics *telemetry.Metrics
	// pools, for a disaggregated model, are its pools' own metrics.
	pools [2]*telemetry.PoolMetrics
	// loadsAtReset is the engine's adapter loads when the summary was
	// last reset (a LoRA model's).
	loadsAtReset atomic.Int64
}

// Server is the simulator's HTTP front: it decodes requests, asks the
// responder what to say and the model's engine when, and streams the
// answer.
type Server struct {
	opts    Options
	models  map[string]*model
	order   []string
	metrics *telemetry.Metrics
	srv     *fasthttp.Server
	// media fetches image URLs where they may be fetched from.
	media   *mediaFetcher
	created int64
	ids     atomic.Int64
	// stored holds the Responses API conversations a later request may
	// continue.
	stored storedResponses
	// streams ends open streams when a graceful shutdown runs out of time.
	streams context.Context
	cancel  context.CancelFunc
	open    sync.WaitGroup
	// bodies is the bytes of request bodies admitted and not yet answered.
	bodies atomic.Int64
}

// NewServer builds engines for every model and the HTTP handler.
func NewServer(o Options) (*Server, error) {
	if o.Models == nil || o.Responder == nil {
		return nil, errors.New("models and responses are required")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 32 << 20
	}
	if o.MaxBodyBytesInFlight <= 0 {
		o.MaxBodyBytesInFlight = 96 << 20
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	maxCtx := 0
	for _, m := range o.Models.Models {
		maxCtx = max(maxCtx, m.ContextLength)
	}
	s := &Server{opts: o, models: map[string]*model{}, metrics: telemetry.NewMetrics(maxCtx), created: time.Now().Unix()}
	s.streams, s.cancel = context.WithCancel(context.Background())
	s.media = newMediaFetcher(o.AllowedMediaHosts)
	for i := range o.Models.Models {
		spec := o.Models.Models[i]
		s.models[spec.Name] = s.newModel(spec)
		s.order = append(s.order, spec.Name)
	}
	s.srv = &fasthttp.Server{
		Handler:            s.handle,
		Name:               "knee-sim",
		MaxRequestBodySize: o.MaxBodyBytes,
		// Bodies are read by the handler, once admitBody has judged their
		// size, so no more of them sits in memory than it admits.
		StreamRequestBody: true,
		ReadTimeout:       o.HeaderTimeout,
		HeaderReceived: func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{ReadTimeout: 60 * time.Second}
		},
		// Error logs never carry request contents, so an Authorization
		// header cannot reach a log.
		SecureErrorLogMessage: true,
		IdleTimeout:           2 * time.Minute,
		NoDefaultServerHeader: false,
		ErrorHandler:          s.transportError,
		Logger:                quietLogger{},
		CloseOnShutdown:       true,
	}
	return s, nil
}

// newModel is a model of the file served: its metrics, faults and engine
// (a scheduler model's with its cache's configuration published).
func (s *Server) newModel(spec ModelSpec) *model {
	m := &model{spec: spec, mm: s.metrics.ForModel(spec.Name), sum: telemetry.NewSummary(string(spec.Engine)), steps: telemetry.NewStepSummary(), metrics: s.metrics}
	if spec.Faults != nil {
		m.faults.set(*spec.Faults)
	}
	switch spec.Engine {
	case EngineInstant:
		m.engine = Instant{}
	case EngineFixedRate:
		m.engine = FixedRateOf(&spec)
	case EngineScheduler:
		cfg := s.opts.Models.SchedConfig(&spec)
		m.schedConf = cfg
		m.wantIDs = cfg.PrefixCaching
		if hw := s.opts.Models.Hardware[spec.Hardware]; hw.MaxPowerW > 0 {
			m.power = newPowerMeter(hw.IdlePowerW, hw.MaxPowerW, time.Now())
		}
		if dc, ok := s.opts.Models.DisaggConfig(&spec, 0); ok {
			s.serveDisaggregated(m, dc)
		} else {
			m.sched = NewScheduler(sched.New(cfg), m.observeStep)
		}
		m.engine = m.sched
		s.metrics.CacheConfig.WithLabelValues(spec.Name, "0", strconv.Itoa(cfg.BlockSize), cacheDType(&spec),
			strconv.FormatBool(cfg.PrefixCaching), strconv.FormatFloat(gpuMemoryUtilization(&spec), 'g', -1, 64),
			strconv.Itoa(cfg.NumBlocks)).Set(1)
	}
	return m
}

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.srv.Serve(ln) }

// Shutdown stops accepting requests and waits up to grace for open streams
// to finish, then ends the rest. fasthttp's plain Shutdown would wait for
// them forever.
func (s *Server) Shutdown(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		<-ctx.Done()
		s.cancel()
	}()
	err := s.srv.ShutdownWithContext(ctx)
	done := make(chan struct{})
	go func() { s.open.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace + time.Second):
	}
	s.cancel()
	for _, m := range s.models {
		m.engine.Close()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// Handler returns the request handler, for tests that serve in memory.
func (s *Server) Handler() fasthttp.RequestHandler { return s.handle }

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	arrival := time.Now()
	path := string(ctx.Path())
	if h := handlerAt(path); h != nil {
		// A request kind's path: its body is read as it is admitted.
		if !s.method(ctx, fasthttp.MethodPost) || !s.authorized(ctx) {
			return
		}
		release, ok := s.admitBody(ctx)
		if !ok {
			return
		}
		defer release()
		s.completion(ctx, arrival, h)
		return
	}
	// Other routes take small bodies (a fault spec) or none.
	if !readBody(ctx, 1<<20) {
		return
	}
	if r, ok := routes[path]; ok {
		s.serveRoute(ctx, path, r)
		return
	}
	if id, ok := strings.CutPrefix(path, "/v1/models/"); ok && id != "" {
		if s.method(ctx, fasthttp.MethodGet) && s.authorized(ctx) {
			s.getModel(ctx, id)
		}
		return
	}
	writeError(ctx, &APIError{Status: 404, Type: "not_found_error", Code: "not_found", Message: fmt.Sprintf("no route for %s", path)})
}

// method checks the request's method; HEAD is accepted wherever GET is
// (fasthttp then sends the headers alone).
func (s *Server) method(ctx *fasthttp.RequestCtx, want string) bool {
	if string(ctx.Method()) == want || (want == fasthttp.MethodGet && ctx.IsHead()) {
		return true
	}
	if want == fasthttp.MethodGet {
		want = "GET, HEAD"
	}
	ctx.Response.Header.Set("Allow", want)
	writeError(ctx, &APIError{Status: 405, Type: "invalid_request_error", Code: "method_not_allowed",
		Message: fmt.Sprintf("method %s is not allowed on %s; use %s", ctx.Method(), ctx.Path(), want)})
	return false
}

func (s *Server) authorized(ctx *fasthttp.RequestCtx) bool {
	if s.opts.APIKey == "" {
		return true
	}
	got := ctx.Request.Header.Peek("Authorization")
	if bytes.Equal(got, []byte("Bearer "+s.opts.APIKey)) {
		return true
	}
	writeError(ctx, &APIError{Status: 401, Type: "authentication_error", Code: "invalid_api_key", Message: "Incorrect API key provided."})
	return false
}

// transportError answers errors fasthttp meets before the handler runs,
// such as a body over the size limit, with OpenAI-shaped bodies.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		writeError(ctx, &APIError{Status: 408, Type: "invalid_request_error", Code: "request_timeout",
			Message: fmt.Sprintf("the request did not arrive within %s", s.opts.HeaderTimeout)})
		ctx.SetConnectionClose()
		return
	}
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		writeError(ctx, &APIError{Status: 413, Type: "invalid_request_error", Code: "request_too_large",
			Message: fmt.Sprintf("request body exceeds the %d-byte limit", s.opts.MaxBodyBytes)})
		return
	}
	writeError(ctx, &APIError{Status: 400, Type: "invalid_request_error", Message: "malformed HTTP request: " + err.Error()})
}

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func writeError(ctx *fasthttp.RequestCtx, e *APIError) {
	if e.Status == 503 && len(ctx.Response.Header.Peek("Retry-After")) == 0 {
		// Busy, not broken: when to come back.
		ctx.Response.Header.Set("Retry-After", "1")
	}
	var b errorBody
	b.Error.Message, b.Error.Type = e.Message, e.Type
	if e.Param != "" {
		b.Error.Param = &e.Param
	}
	if e.Code != "" {
		b.Error.Code = &e.Code
	}
	writeJSON(ctx, e.Status, b)
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	body, _ := json.Marshal(v)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

func (s *Server) listModels(ctx *fasthttp.RequestCtx) {
	var data []modelEntry
	for _, name := range s.order {
		data = append(data, s.modelEntry(name))
		if l := s.models[name].spec.LoRA; l != nil {
			for _, a := range l.Adapters {
				data = append(data, s.modelEntry(a))
			}
		}
	}
	writeJSON(ctx, 200, map[string]any{"object": "list", "data": data})
}

// modelEntry is one model as /v1/models lists it.
type modelEntry struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Created     int64  `json:"created"`
	OwnedBy     string `json:"owned_by"`
	MaxModelLen int    `json:"max_model_len"`
	// Parent is an adapter's base model, as vLLM lists LoRA modules.
	Parent string `json:"parent,omitempty"`
}

// modelEntry is a model or an adapter, by name (it must be one).
func (s *Server) modelEntry(name string) modelEntry {
	e := modelEntry{ID: name, Object: "model", Created: s.created, OwnedBy: "knee"}
	if m := s.models[name]; m != nil {
		e.MaxModelLen = m.spec.ContextLength
	} else if base, _ := s.adapterOf(name); base != nil {
		e.MaxModelLen, e.Parent = base.spec.ContextLength, base.spec.Name
	}
	return e
}

// getModel serves GET /v1/models/{id}.
func (s *Server) getModel(ctx *fasthttp.RequestCtx, id string) {
	if base, _ := s.adapterOf(id); s.models[id] == nil && base == nil {
		writeError(ctx, modelNotFound(id))
		return
	}
	writeJSON(ctx, 200, s.modelEntry(id))
}

func modelNotFound(name string) *APIError {
	return &APIError{Status: 404, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
		Message: fmt.Sprintf("The model `%s` does not exist.", name)}
}

// quietLogger drops fasthttp's reports of clients that went away (normal
// for a simulator under load tests) and passes everything else to the
// standard logger.
type quietLogger struct{}

func (quietLogger) Printf(format string, args ...any) {
	msg := redactAuth(fmt.Sprintf(format, args...))
	for _, normal := range []string{"use of closed network connection", "broken pipe", "connection reset by peer", "body size exceeds"} {
		if strings.Contains(msg, normal) {
			return
		}
	}
	log.Print(msg)
}

// authHeader matches an Authorization header's value wherever a message
// quotes one.
var authHeader = regexp.MustCompile(`(?i)(authorization:\s*)[^\r\n"]*`)

// redactAuth removes credentials from a log message.
func redactAuth(msg string) string {
	return authHeader.ReplaceAllString(msg, "${1}[redacted]")
}

// cacheDType names the KV cache's data type as vLLM's --kv-cache-dtype
// does: "auto" (the model's own) unless the cache holds one byte per
// element.
func cacheDType(m *ModelSpec) string {
	if kv := m.KVCache; kv != nil && kv.BytesPerElement == 1 {
		return "fp8"
	}
	return "auto"
}

// gpuMemoryUtilization is the share of GPU memory the model may use (0.9,
// vLLM's default, unless the model says otherwise).
func gpuMemoryUtilization(m *ModelSpec) float64 {
	if kv := m.KVCache; kv != nil && kv.GPUMemoryUtilization > 0 {
		return kv.GPUMemoryUtilization
	}
	return 0.9
}
