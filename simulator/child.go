package simulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Child is a simulator running as a child process of the same binary, so
// its CPU and garbage collection stay out of the client's measurements.
type Child struct {
	cmd     *exec.Cmd
	BaseURL string
	done    chan struct{}
	dir     string
}

// StartChild runs `exe sim --host 127.0.0.1 --port 0 <args>`, waits until
// it serves /health, and returns it. stderr receives the child's log.
// Each of inputs is written to a file of the child's own and passed as
// --NAME FILE: the parent reads (and checks) the user's files, so a FIFO
// or /dev/stdin given as one is read once, by the process that can say
// what is wrong with it.
func StartChild(ctx context.Context, exe string, args []string, inputs map[string][]byte, stderr io.Writer) (*Child, error) {
	CleanLeftovers(os.TempDir())
	dir, err := os.MkdirTemp("", childDirPrefix)
	if err != nil {
		return nil, err
	}
	// The owner's pid lets a later knee remove this folder if this one is
	// killed before it can (SIGKILL runs no cleanup).
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ready := filepath.Join(dir, "addr")
	full := append([]string{"sim", "--host", "127.0.0.1", "--port", "0", "--ready-file", ready}, args...)
	for name, data := range inputs {
		file := filepath.Join(dir, "input-"+name)
		if err := os.WriteFile(file, data, 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		full = append(full, "--"+name, file)
	}
	cmd := exec.Command(exe, full...)
	cmd.Stdout = io.Discard
	cmd.Stderr = stderr
	cmd.SysProcAttr = childAttrs()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the built-in simulator: %w", err)
	}
	c := &Child{cmd: cmd, done: make(chan struct{}), dir: dir}
	go func() { _ = cmd.Wait(); close(c.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			c.BaseURL = "http://" + strings.TrimSpace(string(b)) + "/v1"
			break
		}
		select {
		case <-c.done:
			os.RemoveAll(dir)
			return nil, errors.New("the built-in simulator exited before serving (see its message above)")
		case <-ctx.Done():
			c.Stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.Stop()
			return nil, errors.New("the built-in simulator did not start within 30 s")
		}
	}
	health := strings.TrimSuffix(c.BaseURL, "/v1") + "/health"
	for {
		if healthy(health) {
			return c, nil
		}
		if time.Now().After(deadline) {
			c.Stop()
			return nil, fmt.Errorf("the built-in simulator does not answer %s", health)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// healthy reports whether GET url answers 200 within a second.
func healthy(url string) bool {
	resp, err := (&http.Client{Timeout: time.Second}).Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

const (
	childDirPrefix = "knee-sim-"
	ownerFile      = "owner"
)

// CleanLeftovers removes the simulator folders under tmp whose owning knee
// process is gone. A folder without an owner file (an older knee's) is
// removed once it is a day old.
func CleanLeftovers(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), childDirPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			if info, ierr := e.Info(); ierr == nil && time.Since(info.ModTime()) > 24*time.Hour {
				os.RemoveAll(dir)
			}
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || !processAlive(pid) {
			os.RemoveAll(dir)
		}
	}
}

// processAlive reports whether a process with this pid exists (it may
// belong to another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Stop ends the child: SIGTERM first (it drains its streams), then a kill
// if it has not exited within five seconds.
func (c *Child) Stop() {
	if c == nil || c.cmd.Process == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	os.RemoveAll(c.dir)
}
