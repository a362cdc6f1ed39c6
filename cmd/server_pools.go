package cmd

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/kneebench/knee/bench/serverview"
	"github.com/kneebench/knee/bench/transport"
)

// poolURLs reads --server-metrics-url as a disaggregated deployment's
// pools, ROLE=URL,ROLE=URL; false when it is one URL.
func poolURLs(v string) (map[string]string, bool, error) {
	role, _, found := strings.Cut(v, "=")
	if !found || strings.Contains(role, "/") || strings.Contains(role, ":") {
		return nil, false, nil
	}
	out := map[string]string{}
	for _, part := range strings.Split(v, ",") {
		role, u, _ := strings.Cut(strings.TrimSpace(part), "=")
		if !slices.Contains(serverview.Roles, role) {
			return nil, true, usageErr("--server-metrics-url: %q is no pool: give %s=URL", role, strings.Join(serverview.Roles, "=URL,"))
		}
		if _, dup := out[role]; dup {
			return nil, true, usageErr("--server-metrics-url: the %s pool is given twice", role)
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, true, usageErr("--server-metrics-url: the %s pool's %q is not an http(s) URL", role, u)
		}
		out[role] = u
	}
	return out, true, nil
}

// openPools reads each pool's page once, before any request, when
// --server-metrics-url names pools.
func (f *serverFlags) openPools(t transport.Target) error {
	if f.none || f.pools != nil {
		return nil
	}
	urls, ok, err := poolURLs(f.url)
	if err != nil || !ok {
		return err
	}
	p, err := serverview.NewPools(t, urls)
	if err != nil {
		return withCode(ExitRuntime, fmt.Errorf("--server-metrics-url: %w", err))
	}
	f.pools = p
	return nil
}
