package server

import (
	"fmt"

	"github.com/valyala/fasthttp"
)

// resetPrefixCaches forgets every scheduler model's cached prefixes, as
// vLLM's POST /reset_prefix_cache and SGLang's POST /flush_cache do, so a
// benchmark's next level starts cold without a restart. Unlike vLLM, which
// answers 200 and only logs a refusal, it answers 409 naming the model
// whose requests still hold blocks, so a client knows the cache is warm.
func (s *Server) resetPrefixCaches(ctx *fasthttp.RequestCtx) {
	var reset []string
	for _, name := range s.order {
		m := s.models[name]
		if m.sched == nil || !m.schedConf.PrefixCaching {
			continue
		}
		if err := m.sched.ResetPrefixCache(); err != nil {
			writeError(ctx, &APIError{Status: 409, Type: "conflict_error", Code: "cache_in_use",
				Message: fmt.Sprintf("model %s: prefix cache not reset: %v; reset it once they finish", name, err)})
			return
		}
		reset = append(reset, name)
	}
	writeJSON(ctx, 200, map[string]any{"reset": true, "models": reset})
}
