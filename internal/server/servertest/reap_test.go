package servertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestReapOrphans(t *testing.T) {
	mk := func(owner int) string {
		dir, err := worldDir("tierbench-reaptest-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(owner)), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	orphan := mk(gone.Process.Pid) // its owner has exited
	alive := mk(os.Getpid())
	reapOrphans(context.Background(), "tierbench-reaptest-")
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan %s was not reaped: %v", orphan, err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("a live process's directory was reaped: %v", err)
	}
}
