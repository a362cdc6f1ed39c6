package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // GIF headers, as vLLM's PIL reads them
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	_ "golang.org/x/image/webp" // WebP headers

	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/workload"
)

// A dataset's images: every reference is checked before the first
// request (a path must be a readable image, a data URL must hold one);
// a local file is read and sent as a data URL when a request needs it,
// ahead of a level's clock as far as memory allows (see prepare).

// MaxImageFileBytes bounds one image file: vLLM's media fetch refuses far
// smaller, and a file past this is not a photograph.
const MaxImageFileBytes = 64 << 20

// localImage marks a reference knee reads itself: the absolute path
// after it. It never reaches a request.
const localImage = "knee-local-image:"

// datasetImages reads a dataset's local images into data URLs.
type datasetImages struct {
	ctx   context.Context
	mu    sync.Mutex
	cache map[string]string
	bytes int
	// files and inline count what the dataset holds, for the run's
	// configuration.
	files, urls, inline int
	dir, urlBase        string
	serve               *imageServer
}

// imageCacheBytes bounds the data URLs kept; past it the cache starts
// again (a level's images are prepared just before it).
const imageCacheBytes = 512 << 20

// resolveImages checks every image reference of the dataset: dir is
// where relative paths are read from (--image-dir, or the dataset's own
// folder). A path becomes a local reference, read when sent; an http(s)
// or file:// URL is sent as it is, for the server to fetch; a data URL
// must hold an image. Errors name the line and the reference.
//
// With urlBase, a path is sent as its place under urlBase instead (it
// must lie in dir), and serve, when set, serves it there.
func resolveImages(ctx context.Context, p *workload.ParsedDataset, dir, urlBase string, serve *imageServer) (*datasetImages, error) {
	di := &datasetImages{ctx: ctx, cache: map[string]string{}, dir: dir, urlBase: urlBase, serve: serve}
	checked := map[string]string{}
	err := p.ImageRefs(func(ref string, line int) (string, error) {
		if v, ok := checked[ref]; ok {
			return v, nil
		}
		v, err := di.resolve(ref)
		if err != nil {
			return "", fmt.Errorf("line %d: image %q: %w", line, clip(ref, 80), err)
		}
		checked[ref] = v
		return v, nil
	})
	if err != nil {
		return nil, err
	}
	return di, nil
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (di *datasetImages) resolve(ref string) (string, error) {
	dir := di.dir
	if head, _, ok := strings.Cut(ref, ":"); ok && len(head) > 1 && !strings.ContainsAny(head, `/\.`) {
		switch strings.ToLower(head) {
		case "data":
			di.inline++
			return ref, checkDataURL(ref)
		case "http", "https":
			u, err := url.Parse(ref)
			if err != nil || u.Host == "" {
				return "", errors.New("not a URL a server can fetch")
			}
			di.urls++
			return ref, nil
		case "file":
			// Sent as it is: the server reads it from its own disk (vLLM's
			// --allowed-local-media-path), as vLLM's benchmark sends paths.
			di.urls++
			return ref, nil
		default:
			return "", fmt.Errorf("a %s: URL: knee sends paths it can read, http(s), file:// and data URLs", head)
		}
	}
	path := ref
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	// Only a regular file: a FIFO or a device would block or never end,
	// and no image is either.
	info, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	data, info, err := readImageFile(di.ctx, path)
	if err != nil {
		return "", err
	}
	if _, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil {
		if errors.Is(err, input.ErrInterrupted) || errors.Is(err, input.ErrTooLarge) {
			return "", err
		}
		return "", fmt.Errorf("%s is no PNG, JPEG, GIF or WebP image (%v)", path, err)
	}
	di.files++
	if di.urlBase == "" {
		return localImage + path, nil
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the image folder %s, so it has no URL under --image-url-base", path, dir)
	}
	name := filepath.ToSlash(rel)
	if di.serve != nil {
		// Served from its own folder only: a link out of it is not.
		if real, err := filepath.EvalSymlinks(path); err != nil || !within(dir, real) {
			return "", fmt.Errorf("%s leads outside the image folder %s (through a link): knee serves only the folder's own files", path, dir)
		}
		di.serve.addFile(name, path, info, data)
	}
	segments := strings.Split(name, "/")
	for i, seg := range segments {
		segments[i] = url.PathEscape(seg)
	}
	return di.urlBase + "/" + strings.Join(segments, "/"), nil
}

// readImageFile reads an image file whole, with the description of the
// very file read (not of whatever its path names a moment later).
func readImageFile(ctx context.Context, path string) ([]byte, os.FileInfo, error) {
	f, err := input.Open(ctx, path, MaxImageFileBytes, "an image")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	return data, info, err
}

// checkDataURL checks that a data URL holds a base64 image.
func checkDataURL(ref string) error {
	meta, data, ok := strings.Cut(ref, ",")
	if !ok || !strings.HasSuffix(meta, ";base64") || !strings.HasPrefix(strings.ToLower(meta), "data:image/") {
		return errors.New("a data URL must be data:image/...;base64,...")
	}
	if _, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data))); err != nil {
		return fmt.Errorf("the data URL holds no PNG, JPEG, GIF or WebP image (%v)", err)
	}
	return nil
}

// url is a reference as sent: a local image's data URL, read once and
// kept while the cache has room; anything else as it is. A file that
// can no longer be read (moved since the check) is sent as an empty data
// URL, which the server refuses, so the request counts as an error.
func (di *datasetImages) url(ref string) string {
	path, ok := strings.CutPrefix(ref, localImage)
	if !ok {
		return ref
	}
	di.mu.Lock()
	u, ok := di.cache[path]
	di.mu.Unlock()
	if ok {
		return u
	}
	u = readDataURL(di.ctx, path)
	di.mu.Lock()
	if di.bytes+len(u) > imageCacheBytes {
		di.cache, di.bytes = map[string]string{}, 0
	}
	di.cache[path] = u
	di.bytes += len(u)
	di.mu.Unlock()
	return u
}

// readDataURL reads an image file as a data URL of its own type.
func readDataURL(ctx context.Context, path string) string {
	f, err := input.Open(ctx, path, MaxImageFileBytes, "an image")
	if err != nil {
		return "data:,"
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return "data:,"
	}
	_, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "data:,"
	}
	return "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// request puts a request's images as sent.
func (di *datasetImages) request(r workload.Request) workload.Request {
	if di == nil {
		return r
	}
	copied := false
	for i, m := range r.Messages {
		if !slices.ContainsFunc(m.Images, isLocalImage) {
			continue
		}
		if !copied {
			// The dataset's own messages stay as they are: a request
			// gets copies.
			r.Messages = append([]workload.Message(nil), r.Messages...)
			copied = true
		}
		sent := make([]string, len(m.Images))
		for k, ref := range m.Images {
			sent[k] = di.url(ref)
		}
		r.Messages[i].Images = sent
	}
	return r
}

func isLocalImage(ref string) bool { return strings.HasPrefix(ref, localImage) }

// prepare reads the images of n requests of src ahead, stopping once the
// cache is half full.
func (di *datasetImages) prepare(src workload.Source, n int) {
	if di == nil || di.files == 0 {
		return
	}
	for i := range n {
		di.request(src.Request(i))
		di.mu.Lock()
		full := di.bytes > imageCacheBytes/2
		di.mu.Unlock()
		if full {
			return
		}
	}
}

// String says what the dataset's images are, for a run's configuration.
func (di *datasetImages) String() string {
	var parts []string
	switch {
	case di.files > 0 && di.serve != nil:
		parts = append(parts, fmt.Sprintf("%d files served by knee under %s", di.files, di.urlBase))
	case di.files > 0 && di.urlBase != "":
		parts = append(parts, fmt.Sprintf("%d files sent as URLs under %s", di.files, di.urlBase))
	case di.files > 0:
		parts = append(parts, fmt.Sprintf("%d files read and sent inline", di.files))
	}
	if di.urls > 0 {
		parts = append(parts, fmt.Sprintf("%d URLs the server fetches", di.urls))
	}
	if di.inline > 0 {
		parts = append(parts, fmt.Sprintf("%d data URLs", di.inline))
	}
	return "from the dataset: " + strings.Join(parts, ", ")
}

// within reports whether path, links resolved, is inside dir (its links
// resolved too).
func within(dir, path string) bool {
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(d, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
