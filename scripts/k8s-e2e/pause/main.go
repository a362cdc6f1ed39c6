// Command pause keeps a pod's namespaces alive, as the pause image of
// Kubernetes does: it waits for SIGINT or SIGTERM and reaps orphans.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			var st syscall.WaitStatus
			if pid, _ := syscall.Wait4(-1, &st, syscall.WNOHANG, nil); pid <= 0 {
				break
			}
		}
	}
}
