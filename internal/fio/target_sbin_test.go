package fio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/systool"
	"github.com/tierbench/tierbench/internal/testenv"
)

// The guard finds blkid, which Debian puts in /usr/sbin, with a PATH such
// as an ordinary user's (or root's after a plain su), which has no sbin
// directory: a formatted device is still refused for what it holds, not
// because blkid seems missing.
func TestTargetGuardWithoutSbinOnPath(t *testing.T) {
	needRoot(t)
	tool := func(name string) string {
		p, err := systool.LookPath(name)
		if err != nil {
			t.Skipf("%s: %v", name, err)
		}
		return p
	}
	losetup, mkfs := tool("losetup"), tool("mkfs.ext4")
	tool("blkid")
	img := filepath.Join(realTempDir(t), "ext4.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-F", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	out, err := exec.Command(losetup, "--read-only", "--find", "--show", img).CombinedOutput()
	if err != nil {
		testenv.SkipOrFail(t, "no loop devices here: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command(losetup, "--detach", dev).Run() })

	t.Setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
	_, err = PrepareTarget(dev, TargetOptions{DestroyDataOn: dev})
	wantRefused(t, err, dev+" holds an ext4 filesystem", "--even-if-formatted")
}
