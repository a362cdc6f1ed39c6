//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package transport

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerClosed reports whether the server has closed (or reset) an idle
// connection, or sent bytes nobody asked for, which no kept-alive HTTP/1.1
// connection may carry between exchanges. It peeks without blocking and
// consumes nothing: one system call per reuse, none per token.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := unix.Recvfrom(int(fd), buf[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case rerr == unix.EAGAIN || rerr == unix.EWOULDBLOCK || rerr == unix.EINTR:
		case rerr != nil, n >= 0:
			closed = true
		}
		return true
	})
	return closed || err != nil
}
