package bench

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/workload"
)

// imageServer serves a run's images to a target that fetches them
// (--image-serve): each level's synthetic images under
// synthetic/SEED/N.FORMAT, and a dataset's checked files under their
// paths relative to the image folder. It serves nothing else: no other
// file of the folder, no image of a seed no level made.
type imageServer struct {
	srv  *http.Server
	addr string

	mu     sync.Mutex
	levels map[uint64]*workload.Images
	files  map[string]servedFile // name under the base → the checked file
	served int
	// hosts are the Host headers the server answers: its own address and
	// --image-url-base's host.
	hosts map[string]bool
}

// servedFile is a dataset's image as it was checked: its path, the file
// it was (its identity, size and time), its type and the hash of its bytes
// then. A file swapped since (for a link elsewhere) is never served, and
// one rewritten in place is cut off where its hash fails.
type servedFile struct {
	path string
	info os.FileInfo
	mime string
	sum  [sha256.Size]byte
}

// same says whether the file open now is the one checked.
func (f servedFile) same(now os.FileInfo) bool {
	return os.SameFile(f.info, now) && f.info.Size() == now.Size() && f.info.ModTime().Equal(now.ModTime())
}

// startImageServer listens on addr (host:port) and serves until ctx
// ends.
func startImageServer(ctx context.Context, addr string) (*imageServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--image-serve %s: %w", addr, err)
	}
	s := &imageServer{addr: ln.Addr().String(), levels: map[uint64]*workload.Images{}, files: map[string]servedFile{}}
	s.hosts = map[string]bool{s.addr: true}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = s.srv.Close() })
	return s, nil
}

// base is the URL the target reaches the server at: urlBase when the
// user gave one (a host the target can reach), else the listening
// address, which must then name a host.
func (s *imageServer) base(urlBase string) (string, error) {
	if urlBase != "" {
		if u, err := url.Parse(urlBase); err == nil && u.Host != "" {
			s.mu.Lock()
			s.hosts[u.Host] = true
			s.mu.Unlock()
		}
		return urlBase, nil
	}
	host, _, _ := net.SplitHostPort(s.addr)
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		return "", fmt.Errorf("--image-serve %s listens on every address: give --image-url-base with one the target reaches it at", s.addr)
	}
	return "http://" + s.addr, nil
}

// addLevel makes a level's synthetic images servable.
func (s *imageServer) addLevel(im *workload.Images) {
	s.mu.Lock()
	s.levels[im.Seed] = im
	s.mu.Unlock()
}

// addFile makes a dataset's image servable under name: the file info
// describes, as checked, whose bytes were data.
func (s *imageServer) addFile(name, path string, info os.FileInfo, data []byte) {
	f := servedFile{path: path, info: info, mime: http.DetectContentType(data), sum: sha256.Sum256(data)}
	s.mu.Lock()
	s.files[name] = f
	s.mu.Unlock()
}

// ServeHTTP serves one image.
func (s *imageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	own := s.hosts[r.Host]
	s.mu.Unlock()
	if !own {
		// Another name for this address (a rebinding one) is not ours.
		http.Error(w, "not this server's host", http.StatusMisdirectedRequest)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if body, mime, ok := s.synthetic(name); ok {
		w.Header().Set("Content-Type", mime)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body) // the one kept copy, not one a fetch
		s.count(1)
		return
	}
	s.mu.Lock()
	file, ok := s.files[name]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.serveFile(w, r, file)
}

// serveFile streams a dataset's file as it was checked, through a buffer:
// forty fetches of a 60 MiB image at once hold forty buffers, not forty
// copies. The file is opened and then compared with the one checked, so
// a link swapped in after the check is refused whatever it points at;
// bytes rewritten in place fail the hash, and the fetch is cut before its
// end rather than completed with them.
func (s *imageServer) serveFile(w http.ResponseWriter, r *http.Request, file servedFile) {
	f, err := input.Open(r.Context(), file.path, MaxImageFileBytes, "an image")
	if err != nil {
		http.Error(w, "the image can no longer be read", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !file.same(now) {
		http.Error(w, "the image changed since it was checked", http.StatusGone)
		return
	}
	w.Header().Set("Content-Type", file.mime)
	w.Header().Set("Content-Length", strconv.FormatInt(file.info.Size(), 10))
	if r.Method == http.MethodHead {
		return
	}
	if streamChecked(w, f, file) {
		s.count(1)
	}
}

// streamChecked copies the file's checked size to w, hashing as it goes,
// and holds back its last piece until the hash is the checked one: a
// mismatch (or a read that fails) aborts the connection, so the fetcher
// sees a cut body, never a whole one. It says whether all was written.
func streamChecked(w http.ResponseWriter, f io.Reader, file servedFile) bool {
	buf := make([]byte, 32<<10)
	h := sha256.New()
	for left := file.info.Size(); left > 0; {
		k, err := io.ReadFull(f, buf[:min(int64(len(buf)), left)])
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		h.Write(buf[:k])
		left -= int64(k)
		if left == 0 && [sha256.Size]byte(h.Sum(nil)) != file.sum {
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(buf[:k]); err != nil {
			return false
		}
	}
	return true
}

// count adds n to the images served and returns how many have been.
func (s *imageServer) count(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served += n
	return s.served
}

// synthetic serves synthetic/SEED/N.FORMAT from the level of that seed.
func (s *imageServer) synthetic(name string) (string, string, bool) {
	rest, ok := strings.CutPrefix(name, "synthetic/")
	if !ok {
		return "", "", false
	}
	seedHex, file, ok := strings.Cut(rest, "/")
	num, _, _ := strings.Cut(file, ".")
	seed, err1 := strconv.ParseUint(seedHex, 16, 64)
	n, err2 := strconv.Atoi(num)
	if !ok || err1 != nil || err2 != nil || n < 0 {
		return "", "", false
	}
	s.mu.Lock()
	im := s.levels[seed]
	s.mu.Unlock()
	if im == nil || file != strings.TrimPrefix(im.Name(n), "synthetic/"+seedHex+"/") {
		return "", "", false
	}
	b, mime := im.Encoded(n)
	return b, mime, true
}

// checkURLBase checks --image-url-base: an http(s) URL with a host.
func checkURLBase(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("--image-url-base must be an http(s) URL with a host and no query (e.g. http://10.0.0.5:8999/images)")
	}
	return strings.TrimSuffix(s, "/"), nil
}
