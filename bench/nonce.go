package bench

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
)

// Nonce is a command's nonce: random per command, it opens every
// synthetic prompt and call identifier, so no run or sweep level is
// flattered by prefixes an earlier one left in the server's cache.
// KNEE_RUN_NONCE fixes it, so that two processes (a live sweep and its
// prediction, or a run's shards) send the very same prompts; so does a
// nonce in ctx (WithNonce), for commands run side by side in one process.
func Nonce(ctx context.Context) string {
	if ctx != nil {
		if n, ok := ctx.Value(nonceKey{}).(string); ok {
			return n
		}
	}
	return cmp.Or(os.Getenv("KNEE_RUN_NONCE"), fmt.Sprintf("%08x", rand.Uint32()))
}

// NonceFixed reports whether the nonce is fixed (KNEE_RUN_NONCE, or ctx's
// own) rather than drawn.
func NonceFixed(ctx context.Context) bool {
	if ctx != nil {
		if _, ok := ctx.Value(nonceKey{}).(string); ok {
			return true
		}
	}
	return os.Getenv("KNEE_RUN_NONCE") != ""
}

// nonceKey keys a command's fixed nonce in its context.
type nonceKey struct{}

// WithNonce is ctx whose commands take nonce as their own (see Nonce).
func WithNonce(ctx context.Context, nonce string) context.Context {
	return context.WithValue(ctx, nonceKey{}, nonce)
}
