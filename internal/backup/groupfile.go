package backup

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/tierbench/tierbench/internal/cgroup"
)

// A logical MariaDB backup is written and read by tierbench itself, which
// runs in no cgroup; the bytes still reach the storage from inside the
// phase's groups: each file is written by a child, dd, started there
// (cgroup.Command), that tierbench feeds through a pipe, and read back by
// another. dd conv=fsync syncs the file before it exits, so that on cgroup
// v1 the writeback is the child's too, not the kernel's on its own.

// fileBuffer is the size of the buffer in front of a writer's pipe and of
// dd's blocks.
const fileBuffer = 1 << 20

// groupWriter writes one new file through a dd child.
type groupWriter struct {
	path string
	cmd  *exec.Cmd
	pipe io.WriteCloser
	buf  *bufio.Writer
	out  tailBuffer
	n    int64 // bytes written

	waited  bool
	waitErr error // dd's end, once waited for
}

// wait ends dd's input and waits for it to exit, once; the error says why
// dd failed.
func (w *groupWriter) wait() error {
	if !w.waited {
		w.waited = true
		w.pipe.Close()
		if err := w.cmd.Wait(); err != nil {
			w.waitErr = fmt.Errorf("writing %s: dd: %v: %s", w.path, err, lastLines(strings.TrimSpace(w.out.String()), 2))
		}
	}
	return w.waitErr
}

// createInGroup starts a dd that writes what it is fed to path, a file
// that must not exist yet, inside the cgroups of procs. Close ends it.
func createInGroup(ctx context.Context, procs []string, path string) (*groupWriter, error) {
	w := &groupWriter{path: path}
	w.cmd = cgroup.Command(ctx, procs, "dd", "of="+path, "bs=1M", "iflag=fullblock", "conv=excl,fsync", "status=none")
	w.cmd.Dir = "/"
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.out
	pipe, err := w.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting dd to write %s: %w", path, err)
	}
	w.pipe, w.buf = pipe, bufio.NewWriterSize(pipe, fileBuffer)
	return w, nil
}

func (w *groupWriter) Write(p []byte) (int, error) {
	n, err := w.buf.Write(p)
	w.n += int64(n)
	if err != nil {
		return n, w.failed(err)
	}
	return n, nil
}

func (w *groupWriter) WriteString(s string) (int, error) {
	n, err := w.buf.WriteString(s)
	w.n += int64(n)
	if err != nil {
		return n, w.failed(err)
	}
	return n, nil
}

func (w *groupWriter) WriteByte(c byte) error {
	if err := w.buf.WriteByte(c); err != nil {
		return w.failed(err)
	}
	w.n++
	return nil
}

// failed is the error of a write into the pipe: dd's own when it died.
func (w *groupWriter) failed(err error) error {
	if werr := w.wait(); werr != nil {
		return werr
	}
	return fmt.Errorf("writing %s: %w", w.path, err)
}

// Close flushes what is buffered, ends the input and waits for dd to write
// and fsync the file.
func (w *groupWriter) Close() error {
	ferr := w.buf.Flush()
	if err := w.wait(); err != nil {
		return err
	}
	if ferr != nil {
		return fmt.Errorf("writing %s: %w", w.path, ferr)
	}
	return nil
}

// Abort stops dd without finishing the file (the caller removes it).
func (w *groupWriter) Abort() {
	if !w.waited && w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
	w.wait()
}

// writeFileInGroup writes b to the new file path through a dd child.
func writeFileInGroup(ctx context.Context, procs []string, path string, b []byte) error {
	w, err := createInGroup(ctx, procs, path)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// groupReader reads one file through a dd child.
type groupReader struct {
	path string
	cmd  *exec.Cmd
	pipe io.ReadCloser
	out  tailBuffer
}

// openInGroup starts a dd that reads path inside the cgroups of procs;
// what it reads comes out of Read. Close ends it.
func openInGroup(ctx context.Context, procs []string, path string) (*groupReader, error) {
	r := &groupReader{path: path}
	r.cmd = cgroup.Command(ctx, procs, "dd", "if="+path, "bs=1M", "status=none")
	r.cmd.Dir = "/"
	r.cmd.Stderr = &r.out
	pipe, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting dd to read %s: %w", path, err)
	}
	r.pipe = pipe
	return r, nil
}

func (r *groupReader) Read(p []byte) (int, error) { return r.pipe.Read(p) }

// Close waits for dd, stopping it first if its output was not read to the
// end; an error is dd's (the file could not be read) when it had been.
func (r *groupReader) Close() error {
	r.pipe.Close() // a dd still writing gets EPIPE
	if err := r.cmd.Wait(); err != nil {
		return fmt.Errorf("reading %s: dd: %v: %s", r.path, err, lastLines(strings.TrimSpace(r.out.String()), 2))
	}
	return nil
}

// readFileInGroup reads all of path through a dd child.
func readFileInGroup(ctx context.Context, procs []string, path string) ([]byte, error) {
	r, err := openInGroup(ctx, procs, path)
	if err != nil {
		return nil, err
	}
	b, rerr := io.ReadAll(r)
	if err := r.Close(); err != nil {
		return nil, err
	}
	return b, rerr
}

// syncInGroup fsyncs paths (files or directories) from a child inside the
// cgroups of procs (coreutils sync FILE…).
func syncInGroup(ctx context.Context, procs []string, paths ...string) error {
	out, err := runGroup(ctx, cgroup.Command(ctx, procs, "sync", append([]string{"--"}, paths...)...))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("syncing %v: %v: %s", paths, err, lastLines(out, 2))
	}
	return nil
}
