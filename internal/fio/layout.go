package fio

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
)

// Layout writes a test file out to t.Size before fio sees it. fio would lay
// the file out itself, but it does so by deleting and re-creating it, which
// would make tierbench's own file unrecognisable (IsTierbenchFile compares
// the inode). The bytes are random, so a datastore that compresses or
// deduplicates reads back what was really written; existing bytes are kept.
// Devices need no layout. progress is told once when there is work to do.
func Layout(ctx context.Context, t *Target, progress func(have, want int64)) error {
	if t.Kind == "device" {
		return nil
	}
	f, err := os.OpenFile(t.File, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("laying out the test file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("laying out the test file: %w", err)
	}
	have := fi.Size()
	if have >= t.Size {
		return nil
	}
	if progress != nil {
		progress(have, t.Size)
	}
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	r := rand.NewChaCha8([32]byte{})
	for off := have; off < t.Size; off += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(chunk), t.Size-off)
		_, _ = r.Read(buf[:n]) // never fails
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return fmt.Errorf("laying out the test file %s: %w", t.File, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("laying out the test file %s: %w", t.File, err)
	}
	return nil
}
