package simulator

import "syscall"

// childAttrs makes the kernel send the child SIGTERM if knee dies without
// stopping it, so no simulator is left behind.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
