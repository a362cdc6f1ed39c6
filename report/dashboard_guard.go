package report

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// A live view serves a run's figures to whoever asks, so it answers only
// requests that name it: a page the user opens elsewhere that resolves
// its own host name to this address (DNS rebinding) asks with that name
// in its Host header, and a page of another origin that fetches from it
// says so in Origin or Sec-Fetch-Site. Literal addresses cannot be
// rebound, so every literal IP is taken, with "localhost"; further names
// only when the user gives them.

// hostGuard answers only requests whose Host is one the view may be
// reached by, and refuses reads from other origins.
type hostGuard struct {
	next  http.Handler
	names []string // lower-cased host names allowed besides literal IPs
}

// allowedHost says whether a Host header (name or address, with or
// without a port) names the view.
func (g hostGuard) allowedHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || host == "localhost" {
		return true
	}
	return slices.Contains(g.names, host)
}

// ServeHTTP implements http.Handler.
func (g hostGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !g.allowedHost(r.Host) {
		http.Error(w, "this live view answers only to its own address (knee --dashboard-host adds a name)", http.StatusMisdirectedRequest)
		return
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		http.Error(w, "this live view is not read from other sites", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || !g.allowedHost(u.Host) || !strings.EqualFold(u.Host, r.Host) {
			http.Error(w, "this live view is not read from other origins", http.StatusForbidden)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}
