package bench_test

import (
	"context"
	"fmt"

	"github.com/kneebench/knee/bench"
)

// A spec as the flags give it becomes a series of levels: here the
// defaults, a closed loop of one stream sending 100 requests of a fixed
// prompt.
func ExampleSpec_Series() {
	spec := &bench.Spec{Workload: "requests", Burstiness: 1, Warmup: -1, Seed: 1, Prompt: "Write a haiku.", MaxTokens: 64, PrefixPool: 1,
		Data: bench.DatasetSpec{Format: "auto", BlockTokens: 512, Speedup: 1}}
	p, err := spec.Series(context.Background(), "nonce")
	if err != nil {
		panic(err)
	}
	fmt.Printf("concurrency %d, %d requests, calls %v\n", p.Load.Concurrency, p.Load.Requests, p.Calls)
	spec.Workload, spec.Concurrency = "voice", 4
	_, err = spec.Series(context.Background(), "nonce")
	fmt.Println(err)
	// Output:
	// concurrency 1, 100 requests, calls false
	// the voice workload is open loop: give --rate (calls per second), not --concurrency
}
