package simulator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kneebench/knee/health/quiet"
)

// TestCleanLeftovers: a folder whose knee was killed goes; one whose knee
// still runs stays.
func TestCleanLeftovers(t *testing.T) {
	quiet.Wire(t, func() { testCleanLeftovers(t) })
}

func testCleanLeftovers(t *testing.T) {
	tmp := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	mk := func(name string, pid int) string {
		dir := filepath.Join(tmp, name)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(pid)), 0o644)
		return dir
	}
	dead := mk(childDirPrefix+"dead", gone.Process.Pid)
	alive := mk(childDirPrefix+"alive", os.Getpid())
	other := mk("something-else", gone.Process.Pid)
	CleanLeftovers(tmp)
	if _, err := os.Stat(dead); err == nil {
		t.Error("the dead owner's folder is still there")
	}
	for _, keep := range []string{alive, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed", keep)
		}
	}
}

func TestBuiltinFilesLoad(t *testing.T) {
	for _, n := range []string{"responses", "bench-responses"} {
		if _, err := LoadResponses(context.Background(), "builtin:"+n); err != nil {
			t.Errorf("builtin:%s: %v", n, err)
		}
	}
	if _, err := LoadModels(context.Background(), "builtin:models"); err != nil {
		t.Errorf("builtin:models: %v", err)
	}
	if _, err := LoadModels(context.Background(), "builtin:nope"); err == nil || !strings.Contains(err.Error(), "no built-in file") {
		t.Errorf("builtin:nope: %v", err)
	}
}
