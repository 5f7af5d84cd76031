package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServerTimeout bounds how long CheckServers waits for a server's answer,
// and RemoveHostFiles for its cleanup job.
var ServerTimeout = 30 * time.Second

// clientCommand is a fio client with args. The I/O happens on the servers,
// so it never goes into r.CgroupProcs' groups; it dies with tierbench.
func (r *Runner) clientCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, r.Path, args...)
	dieWithParent(cmd)
	return cmd
}

// probeJob is the job CheckServers sends: the null engine touches no file.
const probeJob = `; tierbench: which fio does this server run?
[tierbench-version-probe]
ioengine=null
rw=read
bs=4k
size=4k
`

// dirProbeJob is the job CheckHostTarget sends: the filestat engine only
// stat()s its files, and allow_file_create=0 makes a missing one an error
// ("file creation disallowed"). fio creates the missing directories of a
// job's first file with a '/' in its name (create_work_dirs): that first
// file is "/", so none are created.
const dirProbeJob = `; tierbench: which fio does this server run, and is the target directory there?
[tierbench-target-probe]
ioengine=filestat
filename=/:%s
allow_file_create=0
rw=read
bs=4k
size=4k
`

// CheckServers asks every server (all at once) which fio it runs and
// refuses any whose version is not the controller's, one that does not
// answer, and a list with the same server twice: fio's client/server
// protocol changes between fio versions. The error names the first server
// that failed (in the given order) and how many more did.
func (r *Runner) CheckServers(ctx context.Context, servers []Server) error {
	if err := checkServers(servers); err != nil {
		return err
	}
	errs, err := r.probeHosts(ctx, servers, func(Server) string { return probeJob },
		func(s Server, out []byte, runErr error) error { return checkProbe(s, r.Version, out, runErr) })
	if err != nil {
		return err
	}
	return firstOf(servers, errs)
}

// CheckHostTarget does what CheckServers does and checks target on every
// host in the same round trip: CheckRemoteTarget, and a directory must
// exist on every host (fio would create a missing one, and a mistyped
// target would fill another filesystem). Errors about the target wrap
// ErrRefused. With a fio older than 3.18 (no filestat engine) the
// directory is not checked.
func (r *Runner) CheckHostTarget(ctx context.Context, target string, servers []Server, deviceChecked bool) error {
	if err := checkServers(servers); err != nil {
		return err
	}
	if err := CheckRemoteTarget(target, servers, deviceChecked); err != nil {
		return err
	}
	job := fmt.Sprintf(dirProbeJob, filenameValue(path.Clean(target)))
	if major, minor, _ := parseVersion(r.Version); isDevicePath(target) || major == 3 && minor < 18 {
		job = probeJob
	}
	errs, err := r.probeHosts(ctx, servers, func(Server) string { return job },
		func(s Server, out []byte, runErr error) error {
			if err := checkProbe(s, r.Version, out, runErr); err != nil || runErr == nil {
				return err
			}
			if bytes.Contains(out, []byte("file creation disallowed")) {
				return refusef("--target %s does not exist on host %s: create it there, or give a directory that exists on every host", target, s)
			}
			return fmt.Errorf("--target %s on host %s: %s", target, s, clientMessage(string(out), "", runErr.Error()))
		})
	if err != nil {
		return err
	}
	return firstOf(servers, errs)
}

// probeHosts runs job(s) on every server s at once (normal output, whose
// first line is the server's probe reply) and judges each output.
func (r *Runner) probeHosts(ctx context.Context, servers []Server, job func(Server) string,
	judge func(s Server, out []byte, runErr error) error) ([]error, error) {
	dir, err := os.MkdirTemp("", "tierbench-fio-probe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		file := filepath.Join(dir, fmt.Sprintf("probe-%d.fio", i))
		if err := os.WriteFile(file, []byte(job(s)), 0o644); err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, ServerTimeout)
			defer cancel()
			cmd := r.clientCommand(cctx, "--client="+s.clientArg(), file)
			cmd.WaitDelay = time.Second
			out, runErr := cmd.CombinedOutput()
			if ctx.Err() != nil {
				errs[i] = ctx.Err()
				return
			}
			if cctx.Err() != nil {
				runErr = context.DeadlineExceeded
			}
			errs[i] = judge(s, out, runErr)
		}()
	}
	wg.Wait()
	return errs, nil
}

// firstOf returns the first non-nil error, saying which other servers failed too.
func firstOf(servers []Server, errs []error) error {
	var first error
	var others []string
	for i, err := range errs {
		switch {
		case err == nil:
		case first == nil:
			first = err
		default:
			others = append(others, servers[i].host())
		}
	}
	if first == nil || len(others) == 0 || errors.Is(first, context.Canceled) {
		return first
	}
	return fmt.Errorf("%w (and %d more: %s)", first, len(others), strings.Join(others, ", "))
}

var (
	// The client prints the server's probe reply first:
	// "hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1".
	probeReplyRE = regexp.MustCompile(`(?m)^hostname=.*?[, ]fio=([^,\s]+)`)
	// Servers of another protocol version get no further than this.
	protocolRE = regexp.MustCompile(`client/server version mismatch \((\d+) != (\d+)\)`)
	// What the client says when it cannot reach a server.
	unreachableRE = regexp.MustCompile(`(?m)^fio: (connect: .*|failed to connect .*|failed to resolve .*|client: host=.* disconnected.*)$|(?m)^client: host=.* disconnected.*$`)
)

// protocolVersions are fio releases by the client/server protocol they speak
// (FIO_SERVER_VER in server.h), so that a mismatch the client can only report
// as two protocol numbers can name the server's fio.
var protocolVersions = map[int]string{
	80: "fio-3.16 or fio-3.17", 82: "fio-3.18 or fio-3.19", 83: "fio-3.20 or fio-3.21", 84: "fio-3.22",
	86: "fio-3.23, fio-3.24 or fio-3.25", 88: "fio-3.26", 89: "fio-3.27", 94: "fio-3.28", 95: "fio-3.29",
	96: "fio-3.30", 97: "fio-3.31, fio-3.32 or fio-3.33", 99: "fio-3.34", 100: "fio-3.35", 101: "fio-3.36",
	103: "fio-3.37", 107: "fio-3.38 or fio-3.39", 111: "fio-3.40", 113: "fio-3.41", 120: "fio-3.42",
}

// checkProbe judges the output of `fio --client=SERVER probeJob` (normal
// output format, stdout and stderr together; runErr is how the client
// ended, context.DeadlineExceeded when it did not answer in time): nil when
// the server runs the controller's fio version.
func checkProbe(s Server, controller string, out []byte, runErr error) error {
	mismatch := func(remote string) error {
		want := strings.TrimPrefix(controller, "fio-")
		return fmt.Errorf("fio on host %s is %s but the controller's is %s: fio's client/server mode needs the same fio version on both ends; "+
			"install fio %s on %s, or give --fio with a matching fio", s, remote, controller, want, s.host())
	}
	if m := probeReplyRE.FindSubmatch(out); m != nil {
		if remote := string(m[1]); remote != controller {
			return mismatch(remote)
		}
		return nil
	}
	if m := protocolRE.FindSubmatch(out); m != nil {
		theirs, _ := strconv.Atoi(string(m[1]))
		ours, _ := strconv.Atoi(string(m[2]))
		name, ok := protocolVersions[theirs]
		if !ok {
			name = "a fio of another version"
		}
		return mismatch(fmt.Sprintf("%s (client/server protocol %d, not %d)", name, theirs, ours))
	}
	if m := unreachableRE.Find(out); m != nil {
		return fmt.Errorf("fio server %s does not answer (%s): %s, or give the port it listens on as HOST:PORT",
			s, strings.TrimPrefix(string(m), "fio: "), s.startHint())
	}
	if errors.Is(runErr, context.DeadlineExceeded) {
		return fmt.Errorf("fio server %s does not answer within %s: %s, and let port %d through its firewall",
			s, ServerTimeout, s.startHint(), s.Port)
	}
	msg := "no message"
	if runErr != nil {
		msg = firstLine(string(out), runErr.Error())
	}
	return fmt.Errorf("fio server %s did not say which fio it runs (%s); check that `fio --server` listens on port %d there", s, msg, s.Port)
}

// HostRun is one host's part of a point run on several hosts.
type HostRun struct {
	Server  Server
	File    string   // the test file (or device) on the host
	JobFile string   // the job file the host ran
	Result  *Result  // its jobs merged (Read.Hist and Write.Hist: its merged clat bins)
	Seconds []Second // its jobs' per-second logs merged
}

// RunHosts runs one point on every server at once: one job file per host
// (the same spec, with the host's own test file HostFile(set.File, s) and
// log prefix) and one fio client process, which starts them together. The
// point's Result merges all jobs of all hosts (IOPS summed, percentiles from
// the merged bins), its Seconds sum the hosts' per-second IOPS and MB/s
// and weigh their latencies by IOPS; Hosts holds each host's own. set.File
// is the target on the hosts (see CheckRemoteTarget). Job files, output and
// logs stay in workDir. Cancelling ctx stops the point as in Run.
//
// The test files stay on the hosts after the point: RemoveHostFiles
// removes them after the last point, or when a run fails or is interrupted.
func (r *Runner) RunHosts(ctx context.Context, index int, spec Spec, set Settings, workDir string, servers []Server) (*Point, error) {
	if err := CheckRemoteTarget(set.File, servers, set.RemoteDeviceChecked); err != nil {
		return nil, err
	}
	base := filepath.Join(workDir, fmt.Sprintf("point-%02d", index+1))
	p := &Point{Index: index, Spec: spec, Hosts: make([]HostRun, len(servers))}
	var args []string
	var all strings.Builder
	for i, s := range servers {
		hs := set
		hs.File = HostFile(set.File, s)
		hs.LogPrefix = base + "-" + hostSlug(s)
		if hs.Header == "" {
			hs.Header = fmt.Sprintf("tierbench point %d: %s (%s) on %s, one of %d hosts\nre-run by hand: fio --client=%s THIS_FILE --output-format=json+",
				index+1, spec.Name, r.Version, s, len(servers), s.clientArg())
		}
		job, err := JobFile(spec, hs)
		if err != nil {
			return nil, err
		}
		file := hs.LogPrefix + ".fio"
		if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
			return nil, err
		}
		p.Hosts[i] = HostRun{Server: s, File: hs.File, JobFile: job}
		args = append(args, "--client="+s.clientArg(), file)
		fmt.Fprintf(&all, "; ==== %s: %s\n%s", s, filepath.Base(file), job)
	}
	p.JobFile = fmt.Sprintf("; tierbench point %d on %d hosts, one job file each (below): fio %s --output-format=json+\n%s",
		index+1, len(servers), strings.Join(relArgs(args), " "), all.String())
	outFile := base + ".json"
	args = append(args, "--output-format=json+", "--output="+outFile)
	cmd := r.clientCommand(ctx, args...)
	var msgs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msgs, &msgs
	out, end, err := runPoint(ctx, cmd, p, outFile, func(runErr error, out []byte) string {
		return clientMessage(msgs.String(), string(out), runErr.Error())
	})
	if err != nil {
		return nil, err
	}
	agg, hosts, err := ParseClientOutput(out, servers)
	if err != nil {
		if p.Interrupted {
			return nil, errors.Join(ctx.Err(), err)
		}
		return nil, fmt.Errorf("point %s: %w", spec.Name, err)
	}
	p.Result = agg
	p.MeasureEnd = end
	p.MeasureStart = end.Add(-time.Duration(agg.RuntimeS * float64(time.Second)))
	var allLogs []jobLogs
	for i, s := range servers {
		p.Hosts[i].Result = hosts[i]
		logs, err := readJobLogs(base+"-"+hostSlug(s), s.logSuffix())
		if err != nil {
			if p.Interrupted {
				continue
			}
			return nil, fmt.Errorf("point %s on %s: %w", spec.Name, s, err)
		}
		p.Hosts[i].Seconds = mergeSeconds(logs)
		allLogs = append(allLogs, logs...)
	}
	p.Seconds = mergeSeconds(allLogs)
	return p, nil
}

// relArgs shortens the job files of a client command line to their base names.
func relArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "--") {
			out[i] = a
		} else {
			out[i] = filepath.Base(a)
		}
	}
	return out
}

// clientMessage picks the line that says why a fio client failed: the
// first that mentions an error (fio prefixes the servers' messages with
// "<HOST> "), else the first line, else fallback.
func clientMessage(msgs, out, fallback string) string {
	// "fio: connect: Connection refused" comes first, the server it tried next.
	if i := strings.Index(msgs, "fio: failed to connect to "); i >= 0 {
		l, _, _ := strings.Cut(msgs[i:], "\n")
		if m := unreachableRE.FindString(msgs); m != "" && !strings.HasPrefix(m, "fio: failed") {
			return strings.TrimSpace(l) + " (" + strings.TrimPrefix(m, "fio: ") + ")"
		}
		return strings.TrimSpace(l)
	}
	for _, text := range []string{msgs, out} {
		for _, l := range strings.Split(text, "\n") {
			l = strings.TrimSpace(l)
			if strings.Contains(l, "fio: ") || strings.Contains(l, "rror") {
				return l
			}
		}
	}
	return firstLine(msgs+out, fallback)
}

// cleanupJob has fio delete a test file: it reads one block (creating a
// 4 KiB file if there is none, never laying out a big one) and unlinks it.
const cleanupJob = `; tierbench: remove this host's test file
[tierbench-cleanup]
filename=%s
ioengine=psync
rw=read
bs=4k
size=4k
unlink=1
`

// RemoveHostFiles has fio on every server delete the test file it used in
// the directory target (a block device is never touched), all hosts at
// once: it needs nothing but the fio servers. Call it after the last point,
// and after a failed or interrupted one: it runs even when ctx is already
// cancelled (for at most ServerTimeout). The error names the first host
// whose file could not be removed.
func (r *Runner) RemoveHostFiles(ctx context.Context, target string, servers []Server) error {
	if isDevicePath(target) {
		return nil
	}
	if err := CheckRemoteTarget(target, servers, false); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tierbench-fio-cleanup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ServerTimeout)
	defer cancel()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		file := HostFile(target, s)
		job := filepath.Join(dir, hostSlug(s)+".fio")
		if err := os.WriteFile(job, []byte(fmt.Sprintf(cleanupJob, filenameValue(file))), 0o644); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(dir, hostSlug(s)+".json")
			cmd := r.clientCommand(ctx, "--client="+s.clientArg(), job, "--output-format=json", "--output="+out)
			cmd.WaitDelay = time.Second
			msgs, err := cmd.CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("removing %s on %s: %s", file, s, clientMessage(string(msgs), "", err.Error()))
			}
		}()
	}
	wg.Wait()
	return firstOf(servers, errs)
}
