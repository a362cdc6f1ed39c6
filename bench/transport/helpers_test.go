package transport

import (
	"testing"
	"time"
)

// newTestClient is a client of url with a pool of conns connections,
// closed when the test ends.
func newTestClient(t *testing.T, url string, timeout time.Duration, conns int) *Client {
	t.Helper()
	c, err := NewClient(Target{BaseURL: url, Model: "m", Timeout: timeout}, conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
