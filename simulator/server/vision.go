package server

import (
	"context"
	"errors"
	"fmt"
	_ "image/jpeg" // the formats a data URL's image is read in
	_ "image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// maxFetchedImage bounds an image fetched by URL.
const maxFetchedImage = 64 << 20

// maxMediaRedirects bounds the redirects an image fetch follows.
const maxMediaRedirects = 3

// errNotFetched is every refused or failed image fetch's one word: a
// server that told a closed port from a refused address from a 404 would
// scan its network for whoever sends it URLs.
var errNotFetched = errors.New("the image URL could not be fetched")

// mediaFetcher fetches image URLs as vLLM's media connector does (a GET
// within 5 s, a 200 answer, at most 64 MiB), but never from a loopback,
// private, link-local or unspecified address, checked on the address
// each connection dials after DNS, redirects included, unless its host
// is allowed (vLLM's --allowed-media-domains): a test server is often
// deployed where it can reach what its clients cannot.
type mediaFetcher struct {
	allowed map[string]bool
	client  *http.Client
}

func newMediaFetcher(allowed []string) *mediaFetcher {
	m := &mediaFetcher{allowed: map[string]bool{}}
	for _, h := range allowed {
		if h = strings.TrimSpace(strings.ToLower(h)); h != "" {
			m.allowed[h] = true
		}
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	m.client = &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			Proxy: nil, // no environment's proxy reaches around the check
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return m.dial(ctx, d, network, addr)
			},
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxMediaRedirects || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
				return errNotFetched
			}
			return nil
		},
	}
	return m
}

// dial connects to addr's host only where it resolves to public
// addresses, or where the host is allowed.
func (m *mediaFetcher) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, errNotFetched
	}
	if m.allowed[strings.ToLower(host)] {
		return d.DialContext(ctx, network, addr)
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(ips) == 0 {
		return nil, errNotFetched
	}
	for _, ip := range ips {
		if !publicIP(ip.IP) {
			return nil, errNotFetched
		}
	}
	return d.DialContext(ctx, network, net.JoinHostPort(ips[0].IP.String(), port))
}

// publicIP reports whether ip is an address anyone may be sent to: not
// loopback, private (RFC 1918, RFC 4193), shared (RFC 6598),
// link-local, multicast or unspecified.
func publicIP(ip net.IP) bool {
	if ip4 := ip.To4(); ip4 != nil && ip4[0] == 100 && ip4[1]&0xc0 == 64 {
		return false
	}
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified())
}

// fetch gets an image URL's bytes, or the one neutral error; its bytes
// count against held, which must stay within limit while they are read
// (the bodies in flight's bound: 16 fetches of 60 MiB at once once
// killed knee sim), else the fetch is refused as busy (503).
func (m *mediaFetcher) fetch(raw string, held *atomic.Int64, limit int64, mine *int64) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errNotFetched
	}
	resp, err := m.client.Get(raw)
	if err != nil {
		return nil, errNotFetched
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errNotFetched
	}
	var b []byte
	for len(b) <= maxFetchedImage {
		if held.Add(fetchPiece) > limit {
			held.Add(-fetchPiece)
			return nil, &APIError{Status: 503, Type: "server_error", Code: "service_unavailable",
				Message: fmt.Sprintf("the server holds %d MiB of request bodies and fetched images already (its limit %d MiB): retry shortly", held.Load()>>20, limit>>20)}
		}
		*mine += fetchPiece
		b = slices.Grow(b, fetchPiece)
		n, err := io.ReadFull(resp.Body, b[len(b):len(b)+fetchPiece])
		b = b[:len(b)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return b, nil
		}
		if err != nil {
			return nil, errNotFetched
		}
	}
	return nil, fmt.Errorf("the image is larger than %d MiB", maxFetchedImage>>20)
}

// fetchPiece is what a fetch reads, and holds room for, at a time.
const fetchPiece = 1 << 20

// fetcher is the image fetch of one request: its bytes held against the
// bound until release.
func (s *Server) fetcher() (fetch func(string) ([]byte, error), release func()) {
	var mine int64
	limit := int64(s.opts.MaxBodyBytesInFlight)
	return func(raw string) ([]byte, error) { return s.media.fetch(raw, &s.bodies, limit, &mine) },
		func() { s.bodies.Add(-mine) }
}
