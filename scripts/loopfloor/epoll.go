package main

import (
	"fmt"
	"net/netip"
	"runtime"
	"syscall"
)

// readEpoll is the reader with nothing between it and the kernel: raw
// non-blocking sockets in one level-triggered epoll set, drained by one
// locked thread with one read per readiness. It shows what the kernel
// alone charges per message on this machine.
func readEpoll(addr string, conns, size int) error {
	runtime.LockOSThread()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	sa := &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	for range conns {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := syscall.Connect(fd, sa); err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			return err
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return err
		}
	}
	cpu0 := cpuSplitNow()
	var total int64
	buf := make([]byte, 4096)
	events := make([]syscall.EpollEvent, 256)
	for open := conns; open > 0; {
		n, err := syscall.EpollWait(ep, events, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			m, err := syscall.Read(fd, buf)
			switch {
			case m > 0:
				total += int64(m)
			case err == syscall.EAGAIN:
			default: // EOF or error: the writer is done with this one.
				_ = syscall.Close(fd)
				open--
			}
		}
	}
	return report(total, size, cpu0)
}
