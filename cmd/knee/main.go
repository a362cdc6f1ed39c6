// Command knee is a load generator and benchmark suite for LLM serving
// endpoints, with its own simulator of an LLM server.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kneebench/knee/cmd"
)

// hurryLimit is how long knee may still take to write what it measured
// after a second signal.
const hurryLimit = 10 * time.Second

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 3)
	// A hang-up (the terminal closed, a supervisor's reload) ends a run as
	// SIGTERM does: what was measured is written and marked stopped.
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		// The first signal ends the run: in-flight requests are cut, and
		// what was measured is printed and written. Supervisors and GNU
		// timeout often signal twice, a millisecond apart (the process,
		// then its group), so a second signal does not exit before the
		// results are written: it only bounds how long that may take. A
		// third exits at once.
		<-sigs
		cancel()
		<-sigs
		select {
		case <-sigs:
		case <-time.After(hurryLimit):
			fmt.Fprintln(os.Stderr, "knee: still not done after a second signal; exiting")
		}
		os.Exit(cmd.ExitInterrupted)
	}()
	code := cmd.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}
