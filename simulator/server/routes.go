package server

import (
	"fmt"

	"github.com/valyala/fasthttp"
)

// route is one of the server's other paths: the method it takes (GET
// also takes POST when getOrPost), whether it needs the key (whatever
// changes what others read or get does), and when it is off.
type route struct {
	method    string
	getOrPost bool
	auth      bool
	off       func(s *Server) string
	serve     func(s *Server, ctx *fasthttp.RequestCtx, path string)
}

// routes are the server's paths besides the request kinds'.
var routes = map[string]route{
	"/v1/models":       {method: fasthttp.MethodGet, auth: true, serve: func(s *Server, ctx *fasthttp.RequestCtx, _ string) { s.listModels(ctx) }},
	"/health":          {method: fasthttp.MethodGet, serve: func(_ *Server, ctx *fasthttp.RequestCtx, _ string) { ctx.SetStatusCode(200) }},
	"/metrics":         {method: fasthttp.MethodGet, serve: func(s *Server, ctx *fasthttp.RequestCtx, _ string) { s.prometheus(ctx) }},
	"/gpu/metrics":     {method: fasthttp.MethodGet, serve: func(s *Server, ctx *fasthttp.RequestCtx, _ string) { s.gpuMetrics(ctx) }},
	"/metrics/summary": {method: fasthttp.MethodGet, serve: func(s *Server, ctx *fasthttp.RequestCtx, _ string) { s.writeSummary(ctx) }},
	"/metrics/summary/reset": {method: fasthttp.MethodPost, auth: true, serve: func(s *Server, ctx *fasthttp.RequestCtx, _ string) {
		s.resetSummary()
		writeJSON(ctx, 200, map[string]any{"reset": true})
	}},
	// vLLM's and SGLang's names for one thing.
	"/reset_prefix_cache": resetCacheRoute,
	"/flush_cache":        resetCacheRoute,
	"/start_profile":      profileRoute,
	"/stop_profile":       profileRoute,
	"/admin/faults":       {method: fasthttp.MethodPost, getOrPost: true, auth: true, serve: func(s *Server, ctx *fasthttp.RequestCtx, _ string) { s.adminFaults(ctx) }},
}

var (
	resetCacheRoute = route{method: fasthttp.MethodPost, auth: true, serve: func(s *Server, ctx *fasthttp.RequestCtx, _ string) { s.resetPrefixCaches(ctx) }}
	profileRoute    = route{method: fasthttp.MethodPost, auth: true,
		off: func(s *Server) string {
			if s.opts.ProfileDir == "" {
				return "start knee sim with --profile-dir to profile it"
			}
			return ""
		},
		serve: func(s *Server, ctx *fasthttp.RequestCtx, path string) { s.profile(ctx, path == "/start_profile") }}
)

// serveRoute checks r's method and key, then serves it.
func (s *Server) serveRoute(ctx *fasthttp.RequestCtx, path string, r route) {
	if r.off != nil {
		if why := r.off(s); why != "" {
			writeError(ctx, &APIError{Status: 404, Type: "not_found_error", Code: "not_found", Message: fmt.Sprintf("no route for %s: %s", path, why)})
			return
		}
	}
	if !(r.getOrPost && ctx.IsGet()) && !s.method(ctx, r.method) {
		return
	}
	if r.auth && !s.authorized(ctx) {
		return
	}
	r.serve(s, ctx, path)
}
