package backup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/server"
)

// copyBackup copies the physical backup src into the new directory dst, for
// a restore: with modes, ownership (when root) and symlinks kept, and
// everything on stable storage (fsync) when it returns.
//
// The copy is made by child processes, inside the cgroups of procs when
// there are any (cgroup.Command), not in tierbench: on a throttled tier the
// restore's reads and writes must draw from the tier's budget, and
// tierbench itself is in no group. On cgroup v1 a buffered write is charged
// only when the process that dirtied it pushes it out, so the fsync of every
// file and directory is done by a child inside the group too (coreutils sync
// FILE… fsyncs each file in its own context). With no group, the same
// children run: one restore path, measured the same way on every tier.
//
// cp --reflink=never: never a reflink nor copy_file_range (GNU cp uses
// copy_file_range only when reflinks are allowed), which on XFS or btrfs
// would share the backup's blocks and measure metadata, not the storage.
// dst itself is made here, with src's mode and owner: a metadata write,
// which on v1 is the journal's (never the group's) anyway.
func copyBackup(ctx context.Context, procs []string, src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	switch _, err := os.Lstat(dst); {
	case err == nil:
		return fmt.Errorf("restoring into %s: it exists already", dst)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
	}
	if err := os.Chmod(dst, fi.Mode().Perm()); err != nil {
		return err
	}

	// The top level of src but the source's run files, in batches.
	cp := []string{src, "-mindepth", "1", "-maxdepth", "1"}
	for _, n := range server.RunFiles {
		cp = append(cp, "!", "-name", n)
	}
	cp = append(cp, "-exec", "cp", "-a", "--reflink=never", "-t", dst, "--", "{}", "+")
	if err := ctx.Err(); err != nil {
		return err
	}
	out, err := runGroup(ctx, cgroup.Command(ctx, procs, "find", cp...))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("copying %s to %s: %v: %s", src, dst, err, lastLines(out, 4))
	}
	return syncTree(ctx, procs, dst)
}

// syncTree puts every file and directory under dir on stable storage, and
// dir's entry in its parent (the parent again with each batch: an fsync
// that finds nothing to do). A child does it, inside the cgroups of procs
// when there are any (coreutils sync FILE… fsyncs each file in its own
// context): on cgroup v1 a buffered write is charged to whoever pushes it
// out.
func syncTree(ctx context.Context, procs []string, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	args := []string{dir, "(", "-type", "f", "-o", "-type", "d", ")", "-exec", "sync", "--", filepath.Dir(dir), "{}", "+"}
	out, err := runGroup(ctx, cgroup.Command(ctx, procs, "find", args...))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("syncing %s: %v: %s", dir, err, lastLines(out, 4))
	}
	return nil
}
