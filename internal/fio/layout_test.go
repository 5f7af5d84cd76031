package fio

import (
	"context"
	"os"
	"testing"
)

// Layout writes the file out to its size in place: it stays tierbench's
// (fio's own layout would re-create it), keeps existing bytes, and is
// random, not zeros.
func TestLayout(t *testing.T) {
	dir := t.TempDir()
	tg, err := PrepareTarget(dir, TargetOptions{Size: 3<<20 + 512})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Cleanup()
	if err := os.WriteFile(tg.File, []byte("head"), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := 0
	if err := Layout(context.Background(), tg, func(have, want int64) {
		calls++
		if have != 4 || want != tg.Size {
			t.Errorf("progress(%d, %d), want (4, %d)", have, want, tg.Size)
		}
	}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tg.File)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != tg.Size || string(b[:4]) != "head" || !IsTierbenchFile(tg.File) {
		t.Fatalf("after layout: %d bytes (want %d), head %q, tierbench's %t", len(b), tg.Size, b[:4], IsTierbenchFile(tg.File))
	}
	zeros := 0
	for _, c := range b[4:] {
		if c == 0 {
			zeros++
		}
	}
	if zeros > len(b)/100 {
		t.Errorf("%d of %d laid-out bytes are zero: not random data", zeros, len(b))
	}
	if err := Layout(context.Background(), tg, func(int64, int64) { calls++ }); err != nil || calls != 1 {
		t.Errorf("a laid-out file was laid out again (%d progress calls, %v)", calls, err)
	}
}
