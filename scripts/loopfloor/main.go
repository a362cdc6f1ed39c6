// Command loopfloor measures what one token costs on this machine with no
// HTTP, no SSE and no knee code at all: a writer process sends a small
// message per token on each of N loopback TCP connections at absolute
// deadlines, and a reader process drains them with plain blocking reads.
// Both report their CPU time per message and the writer reports how late it
// sent. It is the floor under the simulator's and the client's CPU per token:
// neither can send or receive a token as it falls due for less than this.
//
// Usage (from the repository root):
//
//	go run ./scripts/loopfloor -conns 1000 -interval 20ms -duration 10s
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type readerReport struct {
	Messages int64   `json:"messages"`
	CPUSec   float64 `json:"cpu_s"`
	UserSec  float64 `json:"user_s"`
}

func main() {
	conns := flag.Int("conns", 1000, "concurrent connections (streams)")
	interval := flag.Duration("interval", 20*time.Millisecond, "time between messages on one connection")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	size := flag.Int("size", 200, "bytes per message (a streamed token chunk is about 150-250)")
	oneLoop := flag.Bool("one-loop", false, "send from one goroutine that walks every connection, instead of a goroutine and timer per connection")
	epoll := flag.Bool("epoll", false, "read with one thread on a level-triggered epoll set and raw sockets, bypassing Go's netpoller")
	role := flag.String("role", "writer", "internal: writer or reader")
	addr := flag.String("addr", "", "internal: the writer's address, for the reader")
	flag.Parse()
	var err error
	switch {
	case *role == "reader" && *epoll:
		err = readEpoll(*addr, *conns, *size)
	case *role == "reader":
		err = read(*addr, *conns, *size)
	default:
		err = write(*conns, *interval, *duration, *size, *oneLoop, *epoll)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loopfloor:", err)
		os.Exit(1)
	}
}

// cpuAt is the process's CPU split at one instant.
type cpuAt struct{ user, system float64 }

func cpuSplitNow() cpuAt {
	u, s := cpuSplit()
	return cpuAt{u, s}
}

// report prints the reader's messages and its CPU since cpu0, the user
// part apart: the kernel's share swings with the host, the user part is
// what a program adds to it.
func report(bytes int64, size int, cpu0 cpuAt) error {
	now := cpuSplitNow()
	return json.NewEncoder(os.Stdout).Encode(readerReport{Messages: bytes / int64(size),
		CPUSec: now.user + now.system - cpu0.user - cpu0.system, UserSec: now.user - cpu0.user})
}

// cpuSplit returns the process's user and system CPU seconds. The system
// part is mostly the kernel's loopback path and swings with the host; the
// user part is the program's own and is the steadier one to compare.
func cpuSplit() (user, system float64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds()
}

// read dials every connection, drains each to EOF and reports its CPU.
func read(addr string, conns, size int) error {
	var total atomic.Int64
	var wg sync.WaitGroup
	cpu0 := cpuSplitNow()
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		wg.Go(func() {
			defer c.Close()
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				total.Add(int64(n))
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return report(total.Load(), size, cpu0)
}

// write accepts the reader's connections, then sends one message per
// interval on each at absolute deadlines, staggered across the interval.
func write(conns int, interval, duration time.Duration, size int, oneLoop, epoll bool) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self, "-role", "reader", "-addr", ln.Addr().String(),
		"-conns", fmt.Sprint(conns), "-size", fmt.Sprint(size), fmt.Sprintf("-epoll=%v", epoll))
	var out bytes.Buffer
	child.Stdout, child.Stderr = &out, os.Stderr
	if err := child.Start(); err != nil {
		return err
	}
	accepted := make([]net.Conn, 0, conns)
	for range conns {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		accepted = append(accepted, c)
	}
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = 'x'
	}
	msg[size-1] = '\n'
	lags := make([][]time.Duration, conns)
	var sent atomic.Int64
	var wg sync.WaitGroup
	user0, sys0 := cpuSplit()
	start := time.Now().Add(50 * time.Millisecond)
	due := func(i, k int) time.Time {
		return start.Add(time.Duration(i)*interval/time.Duration(conns) + time.Duration(k)*interval)
	}
	if oneLoop {
		wg.Go(func() { sendFromOneLoop(accepted, due, start.Add(duration), msg, lags, &sent) })
	} else {
		for i, c := range accepted {
			wg.Go(func() { sendFromOwnGoroutine(c, i, due, start.Add(duration), msg, lags, &sent) })
		}
	}
	wg.Wait()
	user1, sys1 := cpuSplit()
	writerUser, writerSys := user1-user0, sys1-sys0
	writerCPU := writerUser + writerSys
	if err := child.Wait(); err != nil {
		return fmt.Errorf("reader: %w", err)
	}
	var rep readerReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return fmt.Errorf("reader report %q: %w", out.Bytes(), err)
	}
	all := slices.Concat(lags...)
	slices.Sort(all)
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e6 }
	n := sent.Load()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "%d conns × 1 message / %v for %v: %d sent (%.0f/s), %d read\n",
		conns, interval, duration, n, float64(n)/duration.Seconds(), rep.Messages)
	fmt.Fprintf(w, "writer: %.2f µs CPU per message (user %.2f, system %.2f) · send lag p50 %.2f ms · p99 %.2f ms · max %.2f ms\n",
		writerCPU*1e6/float64(n), writerUser*1e6/float64(n), writerSys*1e6/float64(n), q(0.5), q(0.99), q(1))
	per := 1e6 / float64(max(rep.Messages, 1))
	fmt.Fprintf(w, "reader: %.2f µs CPU per message (user %.2f, system %.2f)\n",
		rep.CPUSec*per, rep.UserSec*per, (rep.CPUSec-rep.UserSec)*per)
	return nil
}

// sendFromOwnGoroutine is how a Go server usually streams: a goroutine and a
// timer per connection, each message at its own absolute deadline.
func sendFromOwnGoroutine(c net.Conn, i int, due func(i, k int) time.Time, end time.Time, msg []byte, lags [][]time.Duration, sent *atomic.Int64) {
	defer c.Close()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for k := 0; ; k++ {
		at := due(i, k)
		if !at.Before(end) {
			return
		}
		if d := time.Until(at); d > 0 {
			t.Reset(d)
			<-t.C
		}
		lags[i] = append(lags[i], time.Since(at))
		if _, err := c.Write(msg); err != nil {
			return
		}
		sent.Add(1)
	}
}

// sendFromOneLoop walks the connections in deadline order from a single
// goroutine: no timer or goroutine switch per message, only the write.
func sendFromOneLoop(conns []net.Conn, due func(i, k int) time.Time, end time.Time, msg []byte, lags [][]time.Duration, sent *atomic.Int64) {
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for k := 0; ; k++ {
		for i, c := range conns {
			at := due(i, k)
			if !at.Before(end) {
				return
			}
			if d := time.Until(at); d > 0 {
				time.Sleep(d)
			}
			lags[i] = append(lags[i], time.Since(at))
			if _, err := c.Write(msg); err != nil {
				return
			}
			sent.Add(1)
		}
	}
}
