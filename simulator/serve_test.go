package simulator

import (
	"errors"
	"strings"
	"testing"
)

// TestServeSpecChecked: a port or a replica count no listener can take is
// a usage error naming it, before anything listens (--port -1 reached
// the listener, exit 3; --port 70000 blamed --replicas 1).
func TestServeSpecChecked(t *testing.T) {
	ok := ServeSpec{Port: "8000", Replicas: 1, MaxBodyBytes: 1 << 20, MaxBodyBytesInFlight: 1 << 20}
	if err := ok.Check(); err != nil {
		t.Fatalf("a good spec: %v", err)
	}
	for _, tc := range []struct {
		edit func(*ServeSpec)
		want string
	}{
		{func(s *ServeSpec) { s.Port = "-1" }, "--port -1: a port from 1 to 65535"},
		{func(s *ServeSpec) { s.Port = "70000" }, "--port 70000: a port from 1 to 65535"},
		{func(s *ServeSpec) { s.Port = "http" }, "--port must be a number"},
		{func(s *ServeSpec) { s.Port, s.Replicas = "65535", 2 }, "runs past port 65535"},
	} {
		s := ok
		tc.edit(&s)
		err := s.Check()
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want a usage error %q", s, err, tc.want)
		}
	}
}
