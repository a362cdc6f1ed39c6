//go:build !linux

package simulator

import "syscall"

func childAttrs() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
