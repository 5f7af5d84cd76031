package cli

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/server"
)

// runArgs runs tierbench with args and checks the command-line contract for
// a command that cannot succeed here: exit 1 or 2, nothing on stdout, and
// one stderr line "tierbench: …" with no panic in it. It returns the code
// and the line.
func runArgs(t *testing.T, args []string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := Execute(ctx, args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
	line := strings.TrimSuffix(stderr.String(), "\n")
	if (code != ExitFailure && code != ExitUsage) || stdout.Len() > 0 || !strings.HasPrefix(line, "tierbench: ") ||
		strings.Contains(line, "\n") || strings.Contains(line, "goroutine") {
		t.Fatalf("tierbench %q: exit %d, stdout %q, stderr %q", args, code, stdout.String(), stderr.String())
	}
	return code, line
}

// FuzzTPCCRunFlags: any --vus, --rampup, --duration, --mix, --mode,
// --interval and --retry either are refused as bad input naming a flag, or
// pass to the connection, which fails (nothing listens on port 1); either
// way the results store is not created.
func FuzzTPCCRunFlags(f *testing.F) {
	f.Add("1,2,4", "10s", "30s", "", false, "routines", "1s", 0)
	f.Add("0", "2m", "5m", "no=45,p=43,os=4,d=4,sl=4", false, "statements", "0", 3)
	f.Add("1,,2", "-1s", "0s", "no=60,p=30,os=4,d=4,sl=2", false, "fast", "10ms", -1)
	f.Add("1-9223372036854775807", "1h", "1", "no=60,p=30,os=4,d=4,sl=2", true, "routines", "1h", 101)
	f.Add("9223372036854775807", "", "", "no=100", true, "", "", 0)
	f.Add("1\n2", "1s\n", "1s", "no=45,\np=43", false, "routines\n", "1s", 1)
	res := filepath.Join(f.TempDir(), "results")
	f.Fuzz(func(t *testing.T, vus, rampup, duration, mix string, unchecked bool, mode, interval string, retry int) {
		args := []string{"tpcc", "run", "--dsn", "postgres://u:hunter22@127.0.0.1:1/db", "--results", res,
			"--vus=" + vus, "--rampup=" + rampup, "--duration=" + duration, "--mix=" + mix, "--mode=" + mode,
			"--interval=" + interval, "--retry=" + strconv.Itoa(retry)}
		if unchecked {
			args = append(args, "--mix-unchecked")
		}
		code, line := runArgs(t, args)
		switch {
		case code == ExitUsage && !strings.Contains(line, "--"):
			t.Fatalf("%q: bad input that names no flag: %s", args, line)
		case code == ExitFailure && !strings.Contains(line, "cannot connect"):
			t.Fatalf("%q: exit 1 before connecting: %s", args, line)
		case strings.Contains(line, "hunter22"):
			t.Fatalf("%q: the password shows: %s", args, line)
		}
		if _, err := os.Stat(res); err == nil {
			t.Fatalf("%q created the results store", args)
		}
	})
}

// FuzzDiskRunFlags: any ad-hoc point flags either are refused as bad input
// naming a flag, or pass to looking for fio (given as a path that does not
// exist); nothing is written to the target and no store is created.
func FuzzDiskRunFlags(f *testing.F) {
	f.Add("4k", "randrw", "70", "8", "4", "1GiB", "30s", "5s", "", "", 0, 0, 0)
	f.Add("4k,64k,256k", "read,write", "50,70,90", "1,8,32", "1,4", "64MiB", "10s", "0s", "iops_slope:2%", "30s", 100, 50, 20)
	f.Add("12XB", "sideways", "101", "0", "300", "12XB", "0s", "-1s", "flat", "1s", -1, 101, -1)
	f.Add("3000", "randread,,read", "", "5000", "1-100000", "1KiB", "1", "x", "bw:5", "1s", 0, 0, 0)
	f.Add("64m", "randwrite", "0", "4096", "256", "1MiB", "1s", "0s", "iops:1%", "2s", 1<<31-1, 100, 100)
	target := f.TempDir()
	res := filepath.Join(target, "results")
	f.Fuzz(func(t *testing.T, bs, rw, rwmix, depth, jobs, size, duration, ramp, steady, window string, rate, compress, dedupe int) {
		args := []string{"disk", "run", "--target", target, "--results", res, "--fio", "/nonexistent/fio",
			"--bs=" + bs, "--rw=" + rw, "--rwmix=" + rwmix, "--iodepth=" + depth, "--jobs=" + jobs, "--size=" + size,
			"--duration=" + duration, "--ramp=" + ramp, "--steady-state=" + steady, "--steady-state-window=" + window,
			"--rate-iops=" + strconv.Itoa(rate), "--compress-pct=" + strconv.Itoa(compress), "--dedupe-pct=" + strconv.Itoa(dedupe)}
		code, line := runArgs(t, args)
		switch {
		case code == ExitUsage && !strings.Contains(line, "--"):
			t.Fatalf("%q: bad input that names no flag: %s", args, line)
		case code == ExitFailure && !strings.Contains(line, "--fio /nonexistent/fio"):
			t.Fatalf("%q: exit 1 before looking for fio: %s", args, line)
		}
		if entries, _ := os.ReadDir(target); len(entries) > 0 {
			t.Fatalf("%q left %v in the target", args, entries)
		}
	})
}

// FuzzServerStartOptions: `server start`'s flags either are refused with a
// usage error naming a flag, or make options within their bounds: a TCP
// port, memory of at least the minimum, setting names the engine takes, and
// throttles that are not negative and not below 1 B/s when asked.
func FuzzServerStartOptions(f *testing.F) {
	f.Add("postgres", 5433, true, "4GiB", "work_mem=64MB", int64(0), int64(0), 0.0, 0.0, false)
	f.Add("mysql", 0, true, "12XB", "work_mem", int64(-1), int64(5), math.NaN(), math.Inf(1), true)
	f.Add("postgres", 70000, false, "64MiB", "=1", int64(100), int64(0), 0.0000001, 200.0, true)
	f.Add("postgres", 0, false, "", "a.b=x'y\nz", int64(0), int64(0), 1e300, 0.0, false)
	f.Add("postgres", -1, true, "1e400", "1a=1", int64(math.MaxInt64), int64(0), -0.0, 0.5, false)
	dataDir := filepath.Join(f.TempDir(), "data")
	f.Fuzz(func(t *testing.T, engine string, port int, portSet bool, memory, set string, rIOPS, wIOPS int64, rMBps, wMBps float64, noCgroup bool) {
		o := ServerStartOptions{Engine: engine, EngineSet: true, DataDir: dataDir, Port: port, PortSet: portSet, Memory: memory, Set: []string{set},
			ReadIOPS: rIOPS, WriteIOPS: wIOPS, ReadMBps: rMBps, WriteMBps: wMBps, NoCgroup: noCgroup}
		check := func(err error) bool {
			if err == nil {
				return true
			}
			// A value with a line break may show in the message: Execute
			// folds it onto one line.
			var ue *UsageError
			msg := err.Error()
			if !errors.As(err, &ue) && !errors.Is(err, experiment.ErrInvalid) || msg == "" ||
				strings.ContainsAny(msg, "\n\r") && !strings.ContainsAny(engine+memory+set, "\n\r") {
				t.Fatalf("%+v: %v (%T)", o, err, err)
			}
			return false
		}
		cfg, err := o.config()
		if check(err) {
			err = cfg.Validate()
			if err != nil {
				err = options.Flagged(err, serverFlags)
			}
			if check(err) {
				if cfg.Port < 0 || cfg.Port > 65535 || (portSet && cfg.Port == 0) || cfg.Memory != 0 && cfg.Memory < experiment.MinServerMemory {
					t.Fatalf("%+v gave %+v", o, cfg)
				}
				for name := range cfg.Settings {
					if !server.ValidSettingName(name) && !server.ValidMariaSettingName(name) {
						t.Fatalf("%+v gave setting %q", o, name)
					}
				}
				l, asked := cfg.Throttle.Limit(), cfg.Throttle.Asked()
				if l.ReadIOPS < 0 || l.WriteIOPS < 0 || l.ReadBPS < 0 || l.WriteBPS < 0 || (rMBps > 0 && l.ReadBPS < 1) ||
					asked != (l.ReadIOPS > 0 || l.WriteIOPS > 0 || l.ReadBPS > 0 || l.WriteBPS > 0) || asked && noCgroup {
					t.Fatalf("%+v gave throttle %+v, asked %v", o, l, asked)
				}
			}
		}
		if _, err := os.Stat(dataDir); err == nil {
			t.Fatalf("%+v created the data directory", o)
		}
	})
}

// FuzzKeyValueFlags: `report --label ID=NAME` and `scenario --set
// key=value` read an entry as a non-empty key (and, for a label, a
// non-empty name) with everything after the first '=' as the value, or
// refuse it in one line naming the flag.
func FuzzKeyValueFlags(f *testing.F) {
	for _, s := range []string{"20261121-0345=nvme", "vus=1,2,4", "data=/mnt/a=b", "=x", "x=", "x", "", " = ", " id = name ", "a\nb=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, kv string) {
		ro := ReportOptions{Labels: []string{kv}}
		labels, err := ro.labels()
		if err != nil {
			if ue, ok := err.(*UsageError); !ok || !strings.HasPrefix(ue.Msg, "--label ") {
				t.Fatalf("--label %q: %v", kv, err)
			}
		} else {
			for id, name := range labels {
				if id == "" || name == "" || id != strings.TrimSpace(id) || name != strings.TrimSpace(name) {
					t.Fatalf("--label %q gave %q=%q", kv, id, name)
				}
			}
		}
		so := scenarioOptions{Sets: []string{kv}}
		sets, err := so.sets()
		if err != nil {
			if ue, ok := err.(*UsageError); !ok || !strings.HasPrefix(ue.Msg, "--set ") {
				t.Fatalf("--set %q: %v", kv, err)
			}
			return
		}
		for k, v := range sets {
			if k == "" || k != strings.TrimSpace(k) || !strings.HasSuffix(kv, "="+v) {
				t.Fatalf("--set %q gave %q=%q", kv, k, v)
			}
		}
	})
}
