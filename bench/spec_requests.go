package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/workload"
)

// checkBatch checks --batch-size against the endpoint: only a pooling
// endpoint takes a batch of inputs.
func (sp *Spec) checkBatch() error {
	switch {
	case sp.BatchSize != 0 && sp.Endpoint != transport.EndpointEmbeddings:
		return fmt.Errorf("--batch-size batches an embeddings request's inputs (--endpoint embeddings), not %s's", sp.Endpoint)
	case sp.BatchSize < 0 || sp.BatchSize > 4096:
		return fmt.Errorf("--batch-size %d: between 1 and 4096 inputs a request", sp.BatchSize)
	case sp.Documents != 0 && !sp.Endpoint.Pairs():
		return fmt.Errorf("--documents is a rerank or score request's (--endpoint rerank, score), not %s's", sp.Endpoint)
	case sp.Documents < 0 || sp.Documents > 4096:
		return fmt.Errorf("--documents %d: between 1 and 4096 a request", sp.Documents)
	}
	return nil
}

// images reads the --image-* flags: images only go in messages, to an
// endpoint that takes them (chat, responses).
func (sp *Spec) images() (*workload.Images, error) {
	if sp.ImageCount == 0 {
		if sp.given("image-size") || sp.given("image-format") || sp.given("image-pool") || sp.given("image-quality") {
			return nil, errors.New("--image-size, --image-format, --image-quality and --image-pool shape the images of --image-count")
		}
		return nil, nil
	}
	if !sp.Endpoint.Chat() {
		return nil, fmt.Errorf("--image-count sends images in messages (--endpoint chat or responses), not to %s", sp.Endpoint)
	}
	sizes, err := workload.ParseSizes(sp.ImageSizes)
	if err != nil {
		return nil, fmt.Errorf("--image-size: %w", err)
	}
	im := &workload.Images{Count: sp.ImageCount, Sizes: sizes, Format: sp.ImageFormat, Quality: sp.ImageQuality, Pool: sp.ImagePool, Seed: uint64(sp.Seed)}
	return im, im.Check()
}

// readDataset reads --dataset and checks that its images, if it names
// any, can go where the run sends: in messages, with no --image-count
// replacing them.
func (sp *Spec) readDataset(ctx context.Context) (*DatasetFile, error) {
	pd, err := sp.Data.Read(ctx)
	if err != nil || pd.images == nil {
		return pd, err
	}
	switch {
	case !sp.Endpoint.Chat():
		return nil, fmt.Errorf("--dataset %s names images, which go in messages (--endpoint chat or responses), not to %s", sp.Data.Path, sp.Endpoint)
	case sp.ImageCount > 0:
		return nil, fmt.Errorf("--dataset %s names its own images: --image-count would add synthetic ones beside them; give one or the other", sp.Data.Path)
	}
	return pd, nil
}
