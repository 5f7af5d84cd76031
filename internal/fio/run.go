package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/cgroup"
)

// MinVersion is the oldest fio tierbench drives: json+ histograms in ns,
// io_uring and steady-state detection are all there by 3.16 (Ubuntu 20.04's).
var MinVersion = [2]int{3, 16}

// IOEngines are fio's I/O engines tierbench tries, best first.
var IOEngines = []string{"io_uring", "libaio", "psync"}

// Runner runs fio. Each point is one fio process on one job file; its json+
// output and per-second logs are merged job by job (ParseOutput, ReadLogs).
// RunHosts runs a point on several hosts at once through fio's client/server
// mode (`fio --client=HOST JOBFILE …`, whose "client_stats" entries are jobs
// of the same shape, each naming its host) with the same merging.
type Runner struct {
	Path    string // the fio binary
	Version string // as fio prints it, e.g. "fio-3.33"
	// CgroupProcs are cgroup.procs files fio is moved into before it starts
	// (by a shell that writes its own PID there and then execs fio), so its
	// I/O obeys that group's throttles from the first request: an emulated
	// tier measured as the database will see it.
	CgroupProcs []string
}

// command is fio with args, inside r.CgroupProcs' groups when there are any
// (cgroup.Command). fio dies with tierbench: a killed tierbench must not
// leave it writing.
func (r *Runner) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := cgroup.Command(ctx, r.CgroupProcs, r.Path, args...)
	dieWithParent(cmd)
	return cmd
}

// Find locates fio (path, or "fio" in $PATH when path is empty) and checks
// its version. Its errors say how to install fio.
func Find(ctx context.Context, path string) (*Runner, error) {
	const install = "install it with `apt-get install fio` (Debian/Ubuntu) or `dnf install fio` (Fedora/RHEL), or give --fio PATH"
	name := path
	if name == "" {
		name = "fio"
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		if path == "" {
			return nil, fmt.Errorf("fio is not installed (not found in PATH): %s", install)
		}
		return nil, fmt.Errorf("--fio %s is not an executable fio: %s", path, install)
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version failed (%v): %s", bin, err, install)
	}
	version := strings.TrimSpace(string(out))
	major, minor, ok := parseVersion(version)
	if !ok {
		return nil, fmt.Errorf("%s printed version %q, which is not fio's: %s", bin, version, install)
	}
	if major < MinVersion[0] || major == MinVersion[0] && minor < MinVersion[1] {
		return nil, fmt.Errorf("%s is %s, too old: tierbench needs fio %d.%d or newer; %s",
			bin, version, MinVersion[0], MinVersion[1], install)
	}
	return &Runner{Path: bin, Version: version}, nil
}

var versionRE = regexp.MustCompile(`^fio-(\d+)\.(\d+)`)

// parseVersion reads "fio-3.33" (or "fio-3.35-12-gabcdef").
func parseVersion(v string) (major, minor int, ok bool) {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil { // too many digits for an int: not a version fio prints
		return 0, 0, false
	}
	return major, minor, true
}

// PickIOEngine returns the I/O engine to use on file: want if it works, else
// the first of Engines that does. A failure with direct I/O on every engine
// is reported as such, because some filesystems (tmpfs) refuse O_DIRECT.
// The probe reads 64 KiB (laying out at most 1 MiB of a new test file).
func (r *Runner) PickIOEngine(ctx context.Context, file string, direct bool, want string) (string, error) {
	candidates := IOEngines
	if want != "" {
		candidates = []string{want}
	}
	var firstErr error
	for _, e := range candidates {
		err := r.probe(ctx, file, e, direct)
		if err == nil {
			return e, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if want != "" {
		return "", fmt.Errorf("--engine %s does not work on %s: %v; leave --engine out to use the best one that works", want, file, firstErr)
	}
	if direct && r.probe(ctx, file, "psync", false) == nil {
		return "", fmt.Errorf("direct I/O (O_DIRECT) does not work on %s, so the page cache cannot be bypassed; "+
			"use a target on a filesystem that supports it, or add --direct=false", file)
	}
	return "", fmt.Errorf("fio cannot do I/O on %s with any of %s: %v", file, strings.Join(IOEngines, ", "), firstErr)
}

func (r *Runner) probe(ctx context.Context, file, engine string, direct bool) error {
	d := "0"
	if direct {
		d = "1"
	}
	cmd := exec.CommandContext(ctx, r.Path, "--name=tierbench-probe", "--filename="+filenameValue(file), "--ioengine="+engine,
		"--direct="+d, "--rw=read", "--bs=4k", "--size=1m", "--io_size=64k", "--output-format=json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s", firstLine(stderr.String(), err.Error()))
	}
	if _, perr := ParseOutput(out); perr != nil {
		return perr
	}
	return nil
}

// Point is one finished (or interrupted) fio run.
type Point struct {
	Index        int
	Spec         Spec
	Result       *Result
	Seconds      []Second
	JobFile      string
	Started      time.Time
	MeasureStart time.Time
	MeasureEnd   time.Time
	Interrupted  bool
	// Hosts is each host's part when the point ran on several (RunHosts),
	// in the order the servers were given; Result and Seconds are then
	// their aggregate.
	Hosts []HostRun
}

// Run runs one point in workDir (job file, output and logs stay there) and
// merges its results. When ctx is cancelled fio is told to stop (SIGINT) and
// writes what it measured so far; that point comes back with Interrupted
// set, or with an error if fio had nothing to report.
func (r *Runner) Run(ctx context.Context, index int, spec Spec, set Settings, workDir string) (*Point, error) {
	base := filepath.Join(workDir, fmt.Sprintf("point-%02d", index+1))
	set.LogPrefix = base
	if set.Header == "" {
		set.Header = fmt.Sprintf("tierbench point %d: %s (%s)\nre-run by hand: fio --output-format=json+ THIS_FILE", index+1, spec.Name, r.Version)
	}
	job, err := JobFile(spec, set)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".fio", []byte(job), 0o644); err != nil {
		return nil, err
	}
	outFile := base + ".json"
	cmd := r.command(ctx, "--output-format=json+", "--output="+outFile, base+".fio")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	p := &Point{Index: index, Spec: spec, JobFile: job}
	out, end, err := runPoint(ctx, cmd, p, outFile, func(runErr error, out []byte) string {
		return firstLine(stderr.String()+string(out), runErr.Error())
	})
	if err != nil {
		return nil, err
	}
	if p.Result, err = ParseOutput(out); err != nil {
		if p.Interrupted {
			return nil, errors.Join(ctx.Err(), err)
		}
		return nil, fmt.Errorf("point %s: %w", spec.Name, err)
	}
	// fio's clock starts after it has laid out the file and ramped up:
	// the measured interval is the last RuntimeS seconds before it ended.
	p.MeasureEnd = end
	p.MeasureStart = end.Add(-time.Duration(p.Result.RuntimeS * float64(time.Second)))
	if p.Seconds, err = ReadLogs(base); err != nil && !p.Interrupted {
		return nil, fmt.Errorf("point %s: %w", spec.Name, err)
	}
	return p, nil
}

// firstLine returns the first meaningful line of fio's messages, or
// fallback: fio prefixes its errors with "fio: ".
func firstLine(msg, fallback string) string {
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "{") {
			return l
		}
	}
	return fallback
}

// runPoint runs a point's fio (or fio client) command and reads the json+
// output it wrote to outFile. Cancelling ctx sends fio SIGINT, which makes
// it stop and still write what it measured (within 30 s): the point is then
// marked Interrupted and kept when there is output. p.Started is set when
// fio starts, and end is when it ended. failed says fio's own failure, from
// its exit error and its output.
//
// fio 3.33 can hang after writing its output: when a job dies as it starts
// (within its first tens of milliseconds here), the main process writes the
// output, naming the signal, and then waits on a lock forever, deaf to
// SIGINT and SIGTERM. So once outFile holds a whole JSON document and fio
// is still running hangGrace later, it is killed and its output read as if
// it had exited.
func runPoint(ctx context.Context, cmd *exec.Cmd, p *Point, outFile string, failed func(runErr error, out []byte) string) (out []byte, end time.Time, err error) {
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	p.Started = time.Now()
	runErr := cmd.Start()
	if runErr == nil {
		stop := killWhenHung(cmd.Process, outFile, hangGrace)
		runErr = cmd.Wait()
		if stop() {
			runErr = nil
		}
	}
	end = time.Now()
	out, readErr := os.ReadFile(outFile)
	if ctx.Err() != nil {
		p.Interrupted = true
		if readErr != nil || len(bytes.TrimSpace(out)) == 0 {
			return nil, end, ctx.Err()
		}
	} else if runErr != nil {
		return nil, end, fmt.Errorf("fio failed on point %s: %s", p.Spec.Name, failed(runErr, out))
	}
	if readErr != nil {
		return nil, end, fmt.Errorf("fio wrote no output for point %s: %v", p.Spec.Name, readErr)
	}
	return out, end, nil
}

// hangGrace is how long fio may go on running once its output is complete.
// Writing the output is the last thing it does; it then frees its memory
// and exits within milliseconds.
var hangGrace = 15 * time.Second

// killWhenHung watches outFile once a second while proc runs, and kills
// proc when the file has held a whole JSON document for grace. The
// returned stop ends the watch and reports whether proc was killed.
func killWhenHung(proc *os.Process, outFile string, grace time.Duration) (stop func() bool) {
	done, result := make(chan struct{}), make(chan bool, 1)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var lastSize int64 = -1
		var complete time.Time
		for {
			select {
			case <-done:
				result <- false
				return
			case <-tick.C:
			}
			if complete.IsZero() {
				fi, err := os.Stat(outFile)
				if err != nil || fi.Size() == 0 || fi.Size() != lastSize {
					lastSize = -1
					if err == nil {
						lastSize = fi.Size()
					}
					continue
				}
				if data, err := os.ReadFile(outFile); err == nil && wholeJSON(data) {
					complete = time.Now()
				}
				continue
			}
			if time.Since(complete) >= grace {
				result <- proc.Kill() == nil
				return
			}
		}
	}()
	return func() bool {
		close(done)
		return <-result
	}
}

// wholeJSON reports whether data, after any lines fio writes before it,
// holds a complete JSON document.
func wholeJSON(data []byte) bool {
	start := jsonStart(data)
	if start < 0 {
		return false
	}
	var doc json.RawMessage
	return json.NewDecoder(bytes.NewReader(data[start:])).Decode(&doc) == nil
}
