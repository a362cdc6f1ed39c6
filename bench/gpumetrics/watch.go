// Package gpumetrics reads the GPUs' own account of a measured window
// from their exporters (NVIDIA's DCGM exporter, AMD's device metrics
// exporter, or knee sim's DCGM-shaped /gpu/metrics): power sampled through the window, energy
// from the counter at its two ends, utilisation and memory, per GPU and
// summed, and the energy per unit of work. It is a bench.Watcher.
package gpumetrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/kneebench/knee/results"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A series is one exporter metric knee reads: which figure it gives and
// the factor to that figure's unit (W, mJ, %, MiB).
type series struct {
	name  string
	set   func(r *reading, v float64)
	scale float64
}

// sources are the series knee reads, NVIDIA's DCGM exporter's and AMD's
// device metrics exporter's. Where an exporter gives two series for one
// figure, the first listed wins: AMD's socket power (gpu_package_power,
// MI300 and later) before its GPU power (gpu_power_usage).
var sources = []series{
	{"DCGM_FI_DEV_POWER_USAGE", setPower, 1},               // W
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", setEnergy, 1}, // mJ since boot
	{"DCGM_FI_DEV_GPU_UTIL", setUtil, 1},                   // %
	{"DCGM_FI_DEV_FB_USED", setFB, 1},                      // MiB
	{"gpu_package_power", setPower, 1},                     // W
	{"gpu_power_usage", setPower, 1},                       // W
	{"gpu_energy_consumed", setEnergy, 1e-3},               // µJ accumulated
	{"gpu_gfx_activity", setUtil, 1},                       // %
	{"gpu_used_vram", setFB, 1},                            // MB, as the exporter counts them
}

// maxPlausibleW is more than any one GPU draws: a reading past it (an
// exporter's +Inf or 1e308 for "unknown") is no measurement.
const maxPlausibleW = 5000

func setPower(r *reading, v float64) {
	if !r.hasPower && v >= 0 && v <= maxPlausibleW {
		r.power, r.hasPower = v, true
	}
}

func setEnergy(r *reading, v float64) {
	if !r.hasEnergy && v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
		r.energyMJ, r.hasEnergy = v, true
	}
}

func setUtil(r *reading, v float64) {
	if !r.hasUtil {
		r.util, r.hasUtil = v, true
	}
}

func setFB(r *reading, v float64) {
	if !r.hasFB {
		r.fb, r.hasFB = v, true
	}
}

// DefaultInterval is how often power is sampled through the window.
const DefaultInterval = time.Second

// reading is one GPU's figures in one scrape.
type reading struct {
	power, energyMJ, util, fb float64
	hasPower, hasEnergy       bool
	hasUtil, hasFB            bool
}

// key names one GPU: its endpoint and its labels.
type key struct {
	endpoint, gpu, uuid, model, host string
}

// scrape is one read of every endpoint at one instant.
type scrape struct {
	at   time.Time
	gpus map[key]reading
	errs []string
}

// Watcher samples the endpoints over a window.
type Watcher struct {
	urls     []string
	client   *http.Client
	interval time.Duration
	now      func() time.Time

	mu      sync.Mutex
	first   *scrape
	last    *scrape
	samples []*scrape
	cancel  context.CancelFunc
	started chan struct{} // closed once the first scrape is kept
	done    chan struct{}
}

// New is a watcher of the exporters at urls, sampling every interval.
func New(urls []string, interval time.Duration) *Watcher {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Watcher{urls: urls, client: &http.Client{Timeout: 5 * time.Second}, interval: interval, now: time.Now}
}

// Start implements bench.Watcher: the window's first scrape, then
// sampling until End. It waits for the first scrape at most startWait:
// a hung exporter delays the window by that, not by its deadline.
func (w *Watcher) Start(ctx context.Context) {
	sctx, cancel := context.WithCancel(ctx)
	w.mu.Lock()
	w.cancel, w.started, w.done = cancel, make(chan struct{}), make(chan struct{})
	started := w.started
	w.mu.Unlock()
	go w.sample(sctx)
	t := time.NewTimer(startWait)
	defer t.Stop()
	select {
	case <-started:
	case <-t.C:
	case <-ctx.Done():
	}
}

// The bounds on a window's ends: how long Start waits for the first
// scrape, and the deadline of the last (every other has readDeadline).
// An exporter answers in milliseconds; one that does not is no reading.
const (
	startWait   = 500 * time.Millisecond
	endDeadline = time.Second
)

func (w *Watcher) sample(ctx context.Context) {
	defer close(w.done)
	first := w.scrapeAll(ctx)
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	w.first, w.samples = first, []*scrape{first}
	w.mu.Unlock()
	close(w.started)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s := w.scrapeAll(ctx)
			if ctx.Err() != nil {
				// Cut by End: a partial scrape is no sample.
				return
			}
			w.mu.Lock()
			w.samples = append(w.samples, s)
			w.mu.Unlock()
		}
	}
}

// End implements bench.Watcher: sampling stops at once (a scrape in
// flight is abandoned) and the window's last scrape is made within
// endDeadline, so no exporter holds the run past its end for long.
func (w *Watcher) End(ctx context.Context) {
	w.mu.Lock()
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
	ectx, stop := context.WithTimeout(ctx, endDeadline)
	defer stop()
	s := w.scrapeAll(ectx)
	w.mu.Lock()
	w.last = s
	w.samples = append(w.samples, s)
	w.mu.Unlock()
}

// Fill implements bench.Watcher: the window's figures, per GPU and
// summed, and the energy per unit of res's work.
func (w *Watcher) Fill(res *results.Run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.last == nil:
		return
	case w.first == nil:
		res.GPU = &results.GPUFigures{Warnings: []string{fmt.Sprintf(
			"no exporter had answered by the window's end (each read within %s): no reading at its start", readDeadline)}}
		return
	}
	res.GPU = figures(w.samples)
	res.GPU.PerWork(res)
}

// scrapeAll reads every endpoint now.
func (w *Watcher) scrapeAll(ctx context.Context) *scrape {
	s := &scrape{at: w.now(), gpus: map[key]reading{}}
	// Read at once, each within its deadline: a hung exporter (or
	// twenty) delays the window's end by one deadline, not by each.
	parts := make([]*scrape, len(w.urls))
	errs := make([]error, len(w.urls))
	var wg sync.WaitGroup
	for i, u := range w.urls {
		parts[i] = &scrape{gpus: map[key]reading{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, readDeadline)
			defer cancel()
			errs[i] = w.read(rctx, u, parts[i])
		}()
	}
	wg.Wait()
	for i, u := range w.urls {
		if errs[i] != nil {
			s.errs = append(s.errs, fmt.Sprintf("%s: %v", u, errs[i]))
		}
		maps.Copy(s.gpus, parts[i].gpus)
	}
	return s
}

// readDeadline bounds one exporter's reading.
const readDeadline = 2 * time.Second

// read parses one exporter's text into s.
func (w *Watcher) read(ctx context.Context, url string, s *scrape) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return parseExporter(url, io.LimitReader(resp.Body, 16<<20), s)
}

// parseExporter reads an exporter's text into s: its GPUs' readings, each
// GPU named by url and its labels.
func parseExporter(url string, body io.Reader, s *scrape) error {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(body)
	if err != nil {
		return fmt.Errorf("not Prometheus text: %w", err)
	}
	found := false
	for _, src := range sources {
		f := fams[src.name]
		if f == nil {
			continue
		}
		for _, m := range f.Metric {
			v := value(m)
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				continue
			}
			k := gpuKey(url, m)
			r := s.gpus[k]
			src.set(&r, v*src.scale)
			s.gpus[k] = r
			found = true
		}
	}
	if !found {
		return errors.New("no GPU power or energy series: neither a DCGM exporter (DCGM_FI_DEV_POWER_USAGE) nor AMD's device metrics exporter (gpu_power_usage)")
	}
	if n := len(s.gpus); n > maxGPUsPerEndpoint {
		clear(s.gpus)
		return fmt.Errorf("it lists %d GPUs, more than a node's exporter does (knee reads at most %d from one): left out", n, maxGPUsPerEndpoint)
	}
	return nil
}

// maxGPUsPerEndpoint bounds the GPUs one exporter may list: a node's
// exporter lists its GPUs (eight or sixteen, seven partitions each at
// most); thousands are no node's, and reading them every second would
// cost the client what it measures with.
const maxGPUsPerEndpoint = 512

// gpuKey names the GPU a sample is of, from DCGM's labels (gpu, UUID,
// modelName, Hostname) or AMD's (gpu_id with gpu_partition_id past the
// first partition, gpu_uuid, card_model, hostname).
func gpuKey(url string, m *dto.Metric) key {
	k := key{endpoint: url}
	partition := ""
	for _, l := range m.Label {
		switch l.GetName() {
		case "gpu", "gpu_id":
			k.gpu = l.GetValue()
		case "UUID", "gpu_uuid":
			k.uuid = l.GetValue()
		case "modelName", "card_model":
			k.model = l.GetValue()
		case "Hostname", "hostname":
			k.host = l.GetValue()
		case "gpu_partition_id":
			partition = l.GetValue()
		}
	}
	if partition != "" && partition != "0" {
		k.gpu += "/" + partition
	}
	return k
}

// value is a sample's value whatever type its family declares.
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}
