package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// copyBuffer is the size of one read and one write while cloning.
const copyBuffer = 1 << 20

// Clone copies the stopped managed data directory src to dst, so that
// Start(Options{DataDir: dst, NewPort: true}) runs a second server from the
// same data. It refuses a running src, a src that is not a managed data
// directory, and a dst that exists and is not an empty directory.
//
// Modes, ownership (when tierbench runs as root) and symlinks are kept;
// postmaster.pid, the server's log and sockets are not copied. The copy is
// made with read and write, never copy_file_range: on XFS or btrfs that
// would share the blocks (a reflink) and a restore would measure metadata,
// not the storage. Files are streamed, and everything is on stable storage
// (fsync) when Clone returns. On any error, ctx's included, what was copied
// is removed again.
//
// Neither the source's files nor the copies stay in the page cache: a
// memory cgroup charges a cached page to the group that brought it in,
// tierbench's here, not the server's, so a clone that started with its data
// cached would read it outside its own memory cap for as long as it stays
// cached, and beat the source, whose pages its own server brought in and
// its cap holds. (paper-5 at laptop scale: beside backups, on a tier
// throttled to 50 MB/s, the source kept half its NOPM and its two clones
// all of theirs, run after run.) Every instance starts cold instead.
func Clone(ctx context.Context, src, dst string) (err error) {
	src, err = absDir(src)
	if err != nil {
		return err
	}
	if dst, err = absDir(dst); err != nil {
		return err
	}
	if kind, _ := classify(src); kind != dirManaged {
		return &DataDirError{Dir: src, Problem: "is not a tierbench-managed data directory (it has no " + StateFile + " beside a PostgreSQL or MariaDB data directory); there is nothing to clone"}
	}
	if _, _, ok := running(src); ok {
		return &DataDirError{Dir: src, Problem: "belongs to a running server; stop it before cloning (a running server's files are not a consistent copy)"}
	}
	if src == dst || strings.HasPrefix(dst, src+string(filepath.Separator)) {
		return &DataDirError{Dir: dst, Problem: "is inside the data directory it would be cloned from; give a directory outside " + src}
	}
	srcInfo, err := os.Stat(src)
	if err != nil {
		return err
	}
	made, err := cloneTarget(dst, srcInfo)
	if err != nil {
		return err
	}
	defer func() {
		if err == nil {
			return
		}
		if made {
			os.RemoveAll(dst)
		} else {
			emptyDir(dst)
		}
	}()

	wal := walNeeded(ctx, src)
	buf := make([]byte, copyBuffer)
	var synced []string // what to fsync once everything is written
	type dirAttrs struct {
		path string
		fi   fs.FileInfo
	}
	dirs := []dirAttrs{{dst, srcInfo}}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, werr error) error {
		if werr != nil {
			return werr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel == "." {
			synced = append(synced, dst)
			return nil
		}
		if skipInClone(rel, d) || !wal.keeps(rel) {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch mode := fi.Mode(); {
		case mode.IsDir():
			if err := os.Mkdir(to, 0o700); err != nil {
				return err
			}
			synced = append(synced, to)
			dirs = append(dirs, dirAttrs{to, fi})
			return nil
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case mode.IsRegular():
			if err := copyFile(ctx, p, to, buf); err != nil {
				return err
			}
			synced = append(synced, to)
		default:
			return fmt.Errorf("%s is neither a file, a directory nor a symlink (%v); tierbench does not clone it", p, mode.Type())
		}
		return keepAttrs(to, fi)
	})
	if err != nil {
		return fmt.Errorf("cloning %s to %s: %w", src, dst, err)
	}
	// Directory modes last, deepest first: a 0500 directory given its mode
	// early would refuse its own entries.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := keepAttrs(dirs[i].path, dirs[i].fi); err != nil {
			return fmt.Errorf("cloning %s to %s: %w", src, dst, err)
		}
	}
	// Files first, their directories after (the order they were listed in
	// is parents first, so go backwards).
	for i := len(synced) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fsyncPath(synced[i]); err != nil {
			return fmt.Errorf("cloning %s to %s: %w", src, dst, err)
		}
	}
	return fsyncPath(filepath.Dir(dst))
}

// cloneTarget makes dst (or accepts an empty directory there) and reports
// whether Clone created it.
func cloneTarget(dst string, like fs.FileInfo) (made bool, err error) {
	fi, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return false, err
		}
		if err := os.Mkdir(dst, 0o700); err != nil {
			return false, err
		}
		return true, nil
	case err != nil:
		return false, err
	case !fi.IsDir():
		return false, &DataDirError{Dir: dst, Problem: "exists and is not a directory; give a new or empty directory to clone into"}
	}
	entries, err := os.ReadDir(dst)
	if err != nil {
		return false, err
	}
	if len(entries) > 0 {
		return false, &DataDirError{Dir: dst, Problem: "is not empty; give a new or empty directory to clone into"}
	}
	return false, nil
}

// RunFiles are the names, as shell patterns, of a data directory's top-level
// entries that belong to the source's run, not to its data: the pid file,
// the server's log, and sockets with their lock files. A copy of the data
// directory (Clone, a backup's restore) leaves them out.
var RunFiles = []string{"postmaster.pid", "postmaster.opts", LogFile, ".s.PGSQL.*", mariaPIDFile, mariaSocket}

// skipInClone leaves out RunFiles, and sockets anywhere.
func skipInClone(rel string, d fs.DirEntry) bool {
	if d.Type()&fs.ModeSocket != 0 {
		return true
	}
	if strings.Contains(rel, string(filepath.Separator)) {
		return false
	}
	for _, pat := range RunFiles {
		if ok, _ := filepath.Match(pat, rel); ok {
			return true
		}
	}
	return false
}

// walSegments are the WAL segments a copy of a cleanly shut down
// PostgreSQL data directory needs: those from the last checkpoint's redo
// point to the checkpoint itself, one segment after a clean shutdown. The
// others are older ones the next checkpoint removes, and old ones renamed
// for reuse (up to max_wal_size's worth after a large load; six of seven
// on a server here after a TPC-C run), which a server that finds them
// missing makes anew. The zero value keeps every segment.
type walSegments struct{ first, last string }

// keeps says whether the entry rel of the data directory is to be copied:
// anything but a segment (or its archive status) outside first..last.
func (w walSegments) keeps(rel string) bool {
	if w.first == "" {
		return true
	}
	name, ok := strings.CutPrefix(rel, "pg_wal"+string(filepath.Separator))
	if !ok {
		return true
	}
	name = strings.TrimPrefix(name, "archive_status"+string(filepath.Separator))
	name, _, _ = strings.Cut(name, ".")
	if len(name) != 24 || strings.Trim(name, "0123456789ABCDEF") != "" {
		return true // not a segment: a timeline's history, the status directory
	}
	return name >= w.first && name <= w.last
}

// walNeeded finds the segments a copy of the PostgreSQL data directory dir
// needs, from pg_controldata: every segment (the zero value) unless the
// server was shut down cleanly and the tool of its major version reads it.
func walNeeded(ctx context.Context, dir string) walSegments {
	bin, err := FindBinaries("")
	if err != nil || checkMajor(dir, bin) != nil {
		return walSegments{}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin.Dir, "pg_controldata"), "-D", dir)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		return walSegments{}
	}
	return parseControlData(string(out))
}

// parseControlData reads pg_controldata's report: the redo point's segment
// and the checkpoint's, on the checkpoint's timeline, for a cluster shut
// down cleanly; otherwise the zero value.
func parseControlData(out string) walSegments {
	field := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			field[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	first := field["Latest checkpoint's REDO WAL file"]
	hi, lo, ok := strings.Cut(field["Latest checkpoint location"], "/")
	tli, err1 := strconv.ParseUint(field["Latest checkpoint's TimeLineID"], 10, 32)
	size, err2 := strconv.ParseUint(field["Bytes per WAL segment"], 10, 64)
	h, err3 := strconv.ParseUint(hi, 16, 32)
	l, err4 := strconv.ParseUint(lo, 16, 32)
	if field["Database cluster state"] != "shut down" || len(first) != 24 || !ok ||
		errors.Join(err1, err2, err3, err4) != nil || size == 0 || size > 1<<32 || 1<<32%size != 0 {
		return walSegments{}
	}
	seg, perID := (h<<32|l)/size, (1<<32)/size
	last := fmt.Sprintf("%08X%08X%08X", tli, seg/perID, seg%perID)
	if last < first {
		return walSegments{}
	}
	return walSegments{first, last}
}

// copyFile streams src into a new file dst, in copyBuffer pieces, checking
// ctx between them, and starts the written data's writeback so the fsync at
// the end has less to wait for.
//
// Only the regions that hold data are read and written. The copy is first
// allocated whole (fallocate), as the source is, so a region the source
// never wrote (a hole, or space preallocated and not yet written) reads as
// zeros in the copy too and is on disk just as much. MariaDB's redo log is
// such a file: 1 GiB preallocated, of which a one-warehouse build had
// written 166 MiB; streaming the rest cost every clone a gigabyte of reads
// and writes. Where the file system cannot preallocate or find the data
// (lseek SEEK_DATA), every byte is copied.
func copyFile(ctx context.Context, src, dst string, buf []byte) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	regions := [][2]int64{{0, size}} // [start, end) of what to copy
	if size > 0 && unix.Fallocate(int(out.Fd()), 0, 0, size) == nil {
		regions = dataRegions(int(in.Fd()), size)
	}
	for _, r := range regions {
		for off := r[0]; off < r[1]; {
			if err := ctx.Err(); err != nil {
				return err
			}
			// Plain reads and writes: io.Copy between two *os.File would
			// use copy_file_range (see Clone).
			n, rerr := in.ReadAt(buf[:min(int64(len(buf)), r[1]-off)], off)
			if n > 0 {
				if _, err := out.WriteAt(buf[:n], off); err != nil {
					return err
				}
				off += int64(n)
			}
			if rerr == io.EOF {
				break // the source shrank: what it has now is copied
			}
			if rerr != nil {
				return rerr
			}
		}
	}
	// A hint, as PostgreSQL's pg_flush_data: failure only costs speed.
	_ = unix.SyncFileRange(int(out.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	// The source's pages are clean: out of the cache now (see Clone). The
	// copy's are dropped once fsynced (fsyncPath).
	_ = unix.Fadvise(int(in.Fd()), 0, 0, unix.FADV_DONTNEED)
	return out.Close()
}

// dataRegions lists the [start, end) regions of the file fd (size bytes)
// that hold data, by lseek's SEEK_DATA and SEEK_HOLE; the whole file where
// the file system does not tell.
func dataRegions(fd int, size int64) [][2]int64 {
	var out [][2]int64
	for off := int64(0); off < size; {
		start, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) { // no data after off
			break
		}
		if err != nil {
			return [][2]int64{{0, size}}
		}
		end, err := unix.Seek(fd, start, unix.SEEK_HOLE)
		if err != nil {
			return [][2]int64{{0, size}}
		}
		end = min(end, size)
		if start < end {
			out = append(out, [2]int64{start, end})
		}
		off = end
	}
	return out
}

// keepAttrs gives path the mode and, when tierbench runs as root, the owner
// of fi.
func keepAttrs(path string, fi fs.FileInfo) error {
	if os.Geteuid() == 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if err := os.Lchown(path, int(st.Uid), int(st.Gid)); err != nil {
				return err
			}
		}
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil // a symlink's own mode means nothing on Linux
	}
	return os.Chmod(path, fi.Mode().Perm()|fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}

// fsyncPath puts path on stable storage and then drops its pages, clean
// by then, from the page cache (see Clone).
func fsyncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if err == nil {
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) // a hint: failure costs only fairness
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ChownToManaged gives everything under dir to the owner of the managed data
// directory likeDir, when tierbench runs as root and likeDir belongs to the
// unprivileged user that runs its server: e.g. a backup that root's
// pg_basebackup wrote, so that a copy of it starts without a chown of its
// own. Otherwise it does nothing.
func ChownToManaged(dir, likeDir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	acct, err := ownerAccount(likeDir)
	if err != nil {
		return err
	}
	return acct.chownTree(dir)
}

// CheckReachable says whether the user that runs the managed server in
// likeDir can walk down to dir (every existing parent searchable), so that
// a copy of it placed at dir can start. A *DataDirError when not.
func CheckReachable(dir, likeDir string) error {
	acct, err := ownerAccount(likeDir)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	return acct.checkReachable(abs)
}

// CommandAsOwner prepares name to run as the user that owns the managed data
// directory likeDir, the user its server runs as (tierbench's own user when
// it is not root): inside the cgroups of procs from its first instruction
// when there are any (setpriv switches to that user after cgroup.Command
// placed it), in "/" and without our PG* variables. A backup tool that
// reads a server's files, or writes a copy that a server of that user
// starts from, runs so.
func CommandAsOwner(ctx context.Context, likeDir string, procs []string, name string, args ...string) (*exec.Cmd, error) {
	acct, err := ownerAccount(likeDir)
	if err != nil {
		return nil, err
	}
	return acct.commandIn(ctx, procs, name, args...)
}

// ReachableByServer says whether the user a new managed server in dataDir
// would run as can walk down to it: always when tierbench does not run as
// root (the server runs as tierbench's own user); as root, whether every
// existing parent is searchable by the unprivileged service user, which is
// created when missing. The error, when not, says which parent.
func ReachableByServer(ctx context.Context, dataDir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	if kind, err := classify(abs); err == nil && kind == dirManaged {
		if fi, err := os.Stat(abs); err == nil && ownerUID(fi) != 0 {
			acct, err := ownerAccount(abs) // who runs it already
			if err != nil {
				return err
			}
			return acct.checkReachable(abs)
		}
	}
	acct, err := serviceAccount(ctx)
	if err != nil {
		return err
	}
	return acct.checkReachable(abs)
}

// FallbackRoot is where a default data directory goes when the server's
// unprivileged user cannot reach it (DefaultDataDir).
const FallbackRoot = "/var/lib/tierbench"

// DefaultDataDir is the data directory a front end's default dir stands
// for: dir itself when the server's user can reach it (ReachableByServer);
// otherwise (root in a clone under its own 0700 home directory, say) a
// directory under FallbackRoot named after dir's absolute path, so that
// each clone keeps its own server and a later run finds it again, with why
// dir was not used. A directory the user named is never to be moved: only
// a default goes through here.
func DefaultDataDir(ctx context.Context, dir string) (use, why string) {
	err := ReachableByServer(ctx, dir)
	if err == nil {
		return dir, ""
	}
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		return dir, "" // the start will say what is wrong
	}
	sum := sha256.Sum256([]byte(abs))
	alt := filepath.Join(FallbackRoot, hex.EncodeToString(sum[:6]), filepath.Base(abs))
	if ReachableByServer(ctx, alt) != nil {
		return dir, ""
	}
	why = err.Error()
	var de *DataDirError
	if errors.As(err, &de) {
		why, _, _ = strings.Cut(de.Problem, "; ") // what it says to do instead is done here
	}
	return alt, why
}
