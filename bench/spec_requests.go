package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// checkBatch checks --batch-size against the endpoint: only a pooling
// endpoint takes a batch of inputs.
func (sp *Spec) checkBatch() error {
	switch {
	case sp.BatchSize != 0 && sp.Endpoint.Kind().Input != kind.Batch:
		return fmt.Errorf("--batch-size batches the inputs of a request to embed (--endpoint %s), not %s's", kind.Where(batched), sp.Endpoint)
	case sp.BatchSize < 0 || sp.BatchSize > 4096:
		return fmt.Errorf("--batch-size %d: between 1 and 4096 inputs a request", sp.BatchSize)
	case sp.Documents != 0 && sp.Endpoint.Kind().Input != kind.Pairs:
		return fmt.Errorf("--documents are what a query is scored against (--endpoint %s), not %s's", kind.Where(paired), sp.Endpoint)
	case sp.Documents < 0 || sp.Documents > 4096:
		return fmt.Errorf("--documents %d: between 1 and 4096 a request", sp.Documents)
	}
	return nil
}

// images reads the --image-* flags: images only go in messages, to an
// endpoint that takes them (chat, responses).
func (sp *Spec) images(ctx context.Context) (*workload.Images, error) {
	if sp.ImageCount == 0 {
		if sp.given("image-size") || sp.given("image-format") || sp.given("image-pool") || sp.given("image-quality") {
			return nil, errors.New("--image-size, --image-format, --image-quality and --image-pool shape the images of --image-count")
		}
		if (sp.ImageServe != "" || sp.ImageURLBase != "") && sp.Data.Path == "" {
			return nil, errors.New("--image-url-base and --image-serve send images by URL: of --image-count, or of a --dataset that names images")
		}
		return nil, nil
	}
	if !sp.Endpoint.Kind().Chat() {
		return nil, fmt.Errorf("--image-count sends images in messages (--endpoint %s), not to %s", kind.Where(kind.Kind.Chat), sp.Endpoint)
	}
	sizes, err := workload.ParseSizes(sp.ImageSizes)
	if err != nil {
		return nil, fmt.Errorf("--image-size: %w", err)
	}
	im := &workload.Images{Count: sp.ImageCount, Sizes: sizes, Format: sp.ImageFormat, Quality: sp.ImageQuality, Pool: sp.ImagePool, Seed: uint64(sp.Seed), Virtual: sp.VirtualImages}
	if err := im.Check(); err != nil {
		return nil, err
	}
	base, srv, err := sp.imageLinks(ctx)
	if err != nil {
		return nil, err
	}
	if base != "" && srv == nil {
		return nil, errors.New("--image-url-base: knee's synthetic images exist only in knee; --image-serve ADDR serves them there")
	}
	im.URLBase = base
	return im, nil
}

// imageLinks reads --image-url-base and --image-serve once: the base
// images are sent under ("": inline, as data URLs) and knee's own image
// server, when it serves them.
func (sp *Spec) imageLinks(ctx context.Context) (string, *imageServer, error) {
	if sp.serveBase != "" || (sp.ImageServe == "" && sp.ImageURLBase == "") {
		return sp.serveBase, sp.serve, nil
	}
	base := ""
	if sp.ImageURLBase != "" {
		var err error
		if base, err = checkURLBase(sp.ImageURLBase); err != nil {
			return "", nil, err
		}
	}
	if sp.ImageServe != "" {
		srv, err := startImageServer(ctx, sp.ImageServe)
		if err != nil {
			return "", nil, err
		}
		if base, err = srv.base(base); err != nil {
			return "", nil, err
		}
		sp.serve = srv
	}
	sp.serveBase = base
	return base, sp.serve, nil
}

// readDataset reads --dataset and checks that its images, if it names
// any, can go where the run sends: in messages, with no --image-count
// replacing them.
func (sp *Spec) readDataset(ctx context.Context) (*DatasetFile, error) {
	var err error
	if sp.Data.urlBase, sp.Data.serve, err = sp.imageLinks(ctx); err != nil {
		return nil, err
	}
	pd, err := sp.Data.Read(ctx)
	if err != nil {
		return nil, err
	}
	if pd.images == nil {
		if sp.Data.urlBase != "" && sp.ImageCount == 0 {
			return nil, fmt.Errorf("--image-url-base and --image-serve send images by URL, and the dataset %s names none", sp.Data.Path)
		}
		return pd, nil
	}
	switch {
	case !sp.Endpoint.Kind().Chat():
		return nil, fmt.Errorf("--dataset %s names images, which go in messages (--endpoint %s), not to %s", sp.Data.Path, kind.Where(kind.Kind.Chat), sp.Endpoint)
	case sp.ImageCount > 0:
		return nil, fmt.Errorf("--dataset %s names its own images: --image-count would add synthetic ones beside them; give one or the other", sp.Data.Path)
	}
	return pd, nil
}

// batched and paired pick the kinds whose requests carry a batch to embed
// and a query with documents.
func batched(k kind.Kind) bool { return k.Input == kind.Batch }
func paired(k kind.Kind) bool  { return k.Input == kind.Pairs }
