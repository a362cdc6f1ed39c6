// Command knee is a load generator and benchmark suite for LLM serving
// endpoints, with its own simulator of an LLM server.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kneebench/knee/cmd"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		// The first signal ends the run cleanly: what was measured is
		// still printed and written. A second one exits at once.
		cancel()
		<-sigs
		os.Exit(130)
	}()
	code := cmd.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}
