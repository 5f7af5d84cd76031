package systool

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A tool outside PATH is found in the system directories; one on PATH
// first there; a file that cannot be run, or a tool nowhere, is not found.
func TestLookPath(t *testing.T) {
	sbin, bin := t.TempDir(), t.TempDir()
	saved := Dirs
	Dirs = []string{filepath.Join(t.TempDir(), "absent"), sbin}
	t.Cleanup(func() { Dirs = saved })
	t.Setenv("PATH", bin)
	write := func(dir, name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	only := write(sbin, "tb-only-in-sbin", 0o755)
	write(sbin, "tb-both", 0o755)
	onPath := write(bin, "tb-both", 0o755)
	write(sbin, "tb-not-executable", 0o644)
	for _, tc := range []struct{ name, want string }{
		{"tb-only-in-sbin", only},
		{"tb-both", onPath},
		{"tb-not-executable", ""},
		{"tb-nowhere", ""},
		{"./tb-only-in-sbin", ""}, // a path is taken as given
	} {
		got, err := LookPath(tc.name)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("LookPath(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if tc.want == "" && tc.name[0] != '.' && !errors.Is(err, exec.ErrNotFound) {
			t.Errorf("LookPath(%q): %v, want exec.ErrNotFound", tc.name, err)
		}
	}
}

// Debian's blkid, in /usr/sbin, is found with a PATH such as an ordinary
// user's, which has no sbin directory.
func TestLookPathSystemBlkid(t *testing.T) {
	t.Setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
	if _, err := os.Stat("/usr/sbin/blkid"); err != nil {
		t.Skipf("no /usr/sbin/blkid here: %v", err)
	}
	if p, err := LookPath("blkid"); err != nil || filepath.Base(p) != "blkid" {
		t.Errorf("LookPath(blkid) = %q, %v", p, err)
	}
}
