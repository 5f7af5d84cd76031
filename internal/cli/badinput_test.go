package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// badInputLine asserts the contract for a refusal: the exit code, and one
// stderr line "tierbench: …" mentioning each of want, with no trace of a
// panic and nothing on stdout.
func badInputLine(t *testing.T, args []string, code int, stdout, stderr string, wantCode int, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	ok := code == wantCode && len(lines) == 1 && strings.HasPrefix(lines[0], "tierbench: ") && stdout == "" &&
		!strings.Contains(stderr, "panic") && !strings.Contains(stderr, "goroutine")
	for _, w := range want {
		ok = ok && strings.Contains(lines[0], w)
	}
	if !ok {
		t.Errorf("tierbench %s:\nexit %d (want %d), stdout %q\nstderr %q\nwant one 'tierbench: ' line mentioning %q",
			strings.Join(args, " "), code, wantCode, stdout, stderr, want)
	}
}

// Bad flag values of every command are refused before anything starts: exit
// 2, one line naming the flag, no server started, no connection tried (the
// DSNs point at a closed port, which would take exit 1), and nothing made —
// the --results and --datadir given do not exist afterwards. No PostgreSQL
// or fio is needed.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")     // must still not exist at the end
	data := filepath.Join(dir, "data")       // ditto
	backups := filepath.Join(dir, "backups") // ditto
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	const closed = "postgres://u:hunter22@127.0.0.1:1/db" // nothing listens on port 1

	tpccRun := []string{"tpcc", "run", "--dsn", closed, "--results", res, "--rampup", "0s", "--duration", "1s"}
	run := []string{"run", "--datadir", data, "--results", res}
	disk := []string{"disk", "run", "--target", target, "--results", res}
	monitor := []string{"monitor", "--target", target, "--results", res}
	backup := []string{"backup", "run", "--dsn", closed, "--target", backups, "--results", res}
	spaceScan := []string{"space", "--target", target, "--results", res}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		args []string
		want []string
	}{
		// tpcc build and check
		{"build without dsn", []string{"tpcc", "build", "--warehouses", "1"}, []string{"--dsn"}},
		{"build dsn unknown scheme", []string{"tpcc", "build", "--dsn", "ftp://u@h/db", "--warehouses", "1"}, []string{"--dsn", "postgres://"}},
		{"build dsn without scheme", []string{"tpcc", "build", "--dsn", "dbname=x", "--warehouses", "1"}, []string{"--dsn", "no scheme"}},
		{"build dsn bad port", []string{"tpcc", "build", "--dsn", "postgres://u:hunter22@h:notaport/db", "--warehouses", "1"}, []string{"--dsn", "not valid"}},
		{"build zero warehouses", []string{"tpcc", "build", "--dsn", closed, "--warehouses", "0"}, []string{"--warehouses 0 is out of range", "give 1 to"}},
		{"build negative warehouses", []string{"tpcc", "build", "--dsn", closed, "--warehouses", "-1"}, []string{"--warehouses"}},
		{"build warehouses word", []string{"tpcc", "build", "--dsn", closed, "--warehouses", "two"}, []string{"--warehouses"}},
		{"build zero build-vus", []string{"tpcc", "build", "--dsn", closed, "--warehouses", "1", "--build-vus", "0"}, []string{"--build-vus"}},
		{"build huge build-vus", []string{"tpcc", "build", "--dsn", closed, "--warehouses", "1", "--build-vus", "5000"}, []string{"--build-vus", "1024"}},
		{"check other engine", []string{"tpcc", "check", "--dsn", "sqlite://x.db"}, []string{"--dsn", "not supported"}},
		{"check mysql dsn without database", []string{"tpcc", "check", "--dsn", "mysql://u:pw12345@127.0.0.1:3306"}, []string{"names no database", "mysql://user:password@"}},
		{"check mysql dsn bad port", []string{"tpcc", "check", "--dsn", "mariadb://u:pw12345@127.0.0.1:99999/db"}, []string{"port", "1..65535"}},
		{"check mysql dsn bad tls", []string{"tpcc", "check", "--dsn", "mysql://u:pw12345@127.0.0.1/db?tls=maybe"}, []string{"tls=", "skip-verify"}},
		{"check stray argument", []string{"tpcc", "check", "--dsn", closed, "extra"}, []string{"extra"}},
		// tpcc run
		{"run vus 0", append(tpccRun, "--vus", "0"), []string{"--vus", "1 or more"}},
		{"run vus empty entry", append(tpccRun, "--vus", "1,,2"), []string{"--vus", "empty entry"}},
		{"run vus negative", append(tpccRun, "--vus", "-1"), []string{"--vus"}},
		{"run vus backwards", append(tpccRun, "--vus", "4-1"), []string{"--vus", "backwards"}},
		{"run vus too many", append(tpccRun, "--vus", "20000"), []string{"--vus", "10000"}},
		{"run vus max int", append(tpccRun, "--vus", "9223372036854775807"), []string{"--vus"}},
		{"run vus endless range", append(tpccRun, "--vus", "1-9223372036854775807"), []string{"--vus"}},
		{"run rampup word", append(tpccRun, "--rampup", "soon"), []string{"--rampup", "30s"}},
		{"run rampup negative", append(tpccRun, "--rampup", "-1s"), []string{"--rampup", "negative"}},
		{"run duration zero", append(tpccRun, "--duration", "0s"), []string{"--duration", "at least 1s"}},
		{"run duration without unit", append(tpccRun, "--duration", "30"), []string{"--duration"}},
		{"run mode", append(tpccRun, "--mode", "fast"), []string{"--mode", "routines or statements"}},
		{"run mix below minimum", append(tpccRun, "--mix", "no=60,p=30,os=4,d=4,sl=2"), []string{"--mix", "minimum", "--mix-unchecked"}},
		{"run mix not 100", append(tpccRun, "--mix", "no=50"), []string{"--mix", "100"}},
		{"run mix key twice", append(tpccRun, "--mix", "no=10,NO=45,p=33,os=4,d=4,sl=4"), []string{"--mix", "twice"}},
		{"run mix garbage", append(tpccRun, "--mix", "lots"), []string{"--mix", "key=percent"}},
		{"run retry negative", append(tpccRun, "--retry", "-1"), []string{"--retry"}},
		{"run retry huge", append(tpccRun, "--retry", "101"), []string{"--retry"}},
		{"run interval short", append(tpccRun, "--interval", "10ms"), []string{"--interval", "100ms"}},
		{"run seed negative", append(tpccRun, "--seed", "-1"), []string{"--seed"}},
		{"run results is a file", []string{"tpcc", "run", "--dsn", closed, "--results", file}, []string{"--results", "not a directory"}},
		{"run results under a file", []string{"tpcc", "run", "--dsn", closed, "--results", filepath.Join(file, "r")}, []string{"--results", "not a directory"}},
		{"run dsn unknown scheme", []string{"tpcc", "run", "--dsn", "ftp://h", "--results", res}, []string{"--dsn", "postgres://"}},
		// run, the main job: no server may start
		{"main warehouses", append(run, "--warehouses", "0"), []string{"--warehouses"}},
		{"main build-vus", append(run, "--build-vus", "0"), []string{"--build-vus"}},
		{"main vus", append(run, "--vus", "0"), []string{"--vus"}},
		{"main duration", append(run, "--duration", "1"), []string{"--duration"}},
		{"main mode", append(run, "--mode", "x"), []string{"--mode"}},
		{"main report not html", append(run, "--report", filepath.Join(dir, "r.txt")), []string{"--report", ".html"}},
		{"main results file", []string{"run", "--datadir", data, "--results", file}, []string{"--results"}},
		{"main datadir file", []string{"run", "--datadir", file, "--results", res}, []string{"--datadir"}},
		// disk run: nothing written to the target
		{"disk bs unknown unit", append(disk, "--bs", "12XB"), []string{"--bs", "4k"}},
		{"disk bs odd", append(disk, "--bs", "3000"), []string{"--bs", "512"}},
		{"disk bs empty entry", append(disk, "--bs", "4k,,8k"), []string{"--bs"}},
		{"disk size unknown unit", append(disk, "--size", "12XB"), []string{"--size", "1GiB"}},
		{"disk size tiny", append(disk, "--size", "1KiB"), []string{"--size", "1MiB"}},
		{"disk rw", append(disk, "--rw", "sideways"), []string{"--rw", "randread"}},
		{"disk rwmix", append(disk, "--rwmix", "101"), []string{"--rwmix"}},
		{"disk iodepth 0", append(disk, "--iodepth", "0"), []string{"--iodepth"}},
		{"disk iodepth deep", append(disk, "--iodepth", "5000"), []string{"--iodepth", "4096"}},
		{"disk jobs many", append(disk, "--jobs", "300"), []string{"--jobs", "256"}},
		{"disk rate negative", append(disk, "--rate-iops", "-1"), []string{"--rate-iops"}},
		{"disk compress", append(disk, "--compress-pct", "101"), []string{"--compress-pct"}},
		{"disk dedupe", append(disk, "--dedupe-pct", "-1"), []string{"--dedupe-pct"}},
		{"disk duration zero", append(disk, "--duration", "0s"), []string{"--duration"}},
		{"disk ramp negative", append(disk, "--ramp", "-5s"), []string{"--ramp"}},
		{"disk engine", append(disk, "--engine", "spdk"), []string{"--engine", "io_uring"}},
		{"disk profile", append(disk, "--profile", "fast"), []string{"--profile", "quick"}},
		{"disk profile and ad hoc", append(disk, "--profile", "quick", "--bs", "4k"), []string{"--profile", "--bs"}},
		{"disk steady state", append(disk, "--steady-state", "flat"), []string{"--steady-state"}},
		{"disk interval", append(disk, "--interval", "1ms"), []string{"--interval"}},
		{"disk no target", []string{"disk", "run", "--results", res}, []string{"--target"}},
		{"disk target fio cannot name", []string{"disk", "run", "--target", filepath.Join(target, "a;b"), "--results", res}, []string{"--target", "';'"}},
		{"disk results file", []string{"disk", "run", "--target", target, "--results", file}, []string{"--results"}},
		// monitor
		{"monitor no target", []string{"monitor", "--results", res}, []string{"--target"}},
		{"monitor duration", append(monitor, "--duration", "forever"), []string{"--duration"}},
		{"monitor interval zero", append(monitor, "--interval", "0s"), []string{"--interval"}},
		{"monitor dsn scheme", append(monitor, "--dsn", "ftp://h"), []string{"--dsn"}},
		{"monitor results file", []string{"monitor", "--target", target, "--results", file}, []string{"--results"}},
		// backup run: no connection, no target made
		{"backup no target", []string{"backup", "run", "--dsn", closed, "--results", res}, []string{"--target"}},
		{"backup cycles zero", append(backup, "--cycles", "0"), []string{"--cycles"}},
		{"backup cycles many", append(backup, "--cycles", "1001"), []string{"--cycles"}},
		{"backup interval", append(backup, "--interval", "often"), []string{"--interval"}},
		{"space no target", []string{"space", "--results", res}, []string{"no --target given"}},
		{"space missing target", []string{"space", "--target", filepath.Join(dir, "nowhere"), "--results", res}, []string{"nowhere does not exist", "give a directory, a file or a block device"}},
		{"space fifo", []string{"space", "--target", fifo, "--results", res}, []string{"fifo is a named pipe", "give a directory, a regular file or a block device"}},
		{"space block zero", append(spaceScan, "--block", "0"), []string{"--block 0", "a power of two from 512 to 1m"}},
		{"space block not a power of two", append(spaceScan, "--block", "3000"), []string{"block size 3000 bytes is not a power of two"}},
		{"space block too big", append(spaceScan, "--block", "2m"), []string{"block size 2097152 bytes is out of range"}},
		{"space keep-below", append(spaceScan, "--keep-below", "1.5"), []string{"keep-below 1.5 is out of range"}},
		{"space keep-below zero", append(spaceScan, "--keep-below", "0"), []string{"--keep-below 0 is not above 0"}},
		{"space zstd-sample", append(spaceScan, "--zstd-sample", "3"), []string{`--zstd-sample: zstd sample "3" is not auto or a power of two`}},
		{"space zstd-sample word", append(spaceScan, "--zstd-sample", "most"), []string{`zstd sample "most"`, "give e.g. auto, 1 or 32"}},
		{"backup start-at not a time", append(backup, "--start-at", "17:40"), []string{"--start-at \"17:40\" is not an RFC 3339 time", "2026-11-26T17:40:00.250Z"}},
		{"backup start-at too far", append(backup, "--start-at", "2099-01-01T00:00:00Z"), []string{"--start-at 2099-01-01T00:00:00Z is", "within a day"}},
		{"backup jobs", append(backup, "--jobs", "0"), []string{"--jobs"}},
		{"backup sample interval", append(backup, "--sample-interval", "1ms"), []string{"--sample-interval"}},
		{"backup target is a file", []string{"backup", "run", "--dsn", closed, "--target", file, "--results", res}, []string{"--target", "directory"}},
		{"backup results file", []string{"backup", "run", "--dsn", closed, "--target", backups, "--results", file}, []string{"--results"}},
		{"backup dsn scheme", []string{"backup", "run", "--dsn", "ftp://h", "--target", backups, "--results", res}, []string{"--dsn"}},
		{"backup pg-bin missing", append(backup, "--pg-bin", "/nonexistent"), []string{"--pg-bin", "pg_basebackup", "apt-get install postgresql-client"}},
		{"backup pg-bin missing logical", append(backup, "--pg-bin", target, "--logical"), []string{"--pg-bin", "pg_dump", "apt-get install postgresql-client"}},
		// scenario run: refused before any target is prepared
		{"scenario results file", []string{"scenario", "run", "quick", "--data", data, "--results", file}, []string{"--results"}},
		{"scenario set without value", []string{"scenario", "run", "quick", "--data", data, "--results", res, "--set", "vus"}, []string{"--set"}},
		{"scenario data twice", []string{"scenario", "run", "quick", "--data", data, "--set", "data=/x", "--results", res}, []string{"--data", "--set"}},
		{"scenario set bad value", []string{"scenario", "run", "quick", "--data", data, "--results", res, "--set", "vus=0"}, []string{"--set vus", "1 or more"}},
		{"scenario unknown variable", []string{"scenario", "run", "quick", "--data", data, "--results", res, "--set", "vu=1"}, []string{"--set vu", "did you mean vus?"}},
		{"scenario two arguments", []string{"scenario", "run", "quick", "paper-1-memory", "--results", res}, []string{"scenario run"}},
		// server
		{"server port", []string{"server", "start", "--datadir", data, "--port", "70000"}, []string{"--port"}},
		{"server port zero", []string{"server", "start", "--datadir", data, "--port", "0"}, []string{"--port"}},
		{"server memory unit", []string{"server", "start", "--datadir", data, "--memory", "12XB"}, []string{"--memory"}},
		{"server memory tiny", []string{"server", "start", "--datadir", data, "--memory", "1MiB"}, []string{"--memory"}},
		{"server read-iops", []string{"server", "start", "--datadir", data, "--read-iops", "-1"}, []string{"--read-iops"}},
		{"server write-mbps", []string{"server", "start", "--datadir", data, "--write-mbps", "NaN"}, []string{"--write-mbps"}},
		{"server read-mbps huge", []string{"server", "start", "--datadir", data, "--read-mbps", "1e300"}, []string{"--read-mbps"}},
		{"server set", []string{"server", "start", "--datadir", data, "--set", "work_mem"}, []string{"--set"}},
		{"server set name", []string{"server", "start", "--datadir", data, "--set", "work mem=1MB"}, []string{"--set"}},
		{"server datadir file", []string{"server", "start", "--datadir", file}, []string{"--datadir"}},
		{"server stop mode", []string{"server", "stop", "--datadir", data, "--mode", "slow"}, []string{"--mode"}},
		{"server stop without datadir", []string{"server", "stop"}, []string{"--datadir"}},
		// report and results
		{"report results file", []string{"report", "--results", file}, []string{"--results"}},
		{"report no store", []string{"report", "--results", res}, []string{"--results", "no results store"}},
		{"results show no store", []string{"results", "show", "latest", "--results", res}, []string{"--results", "no results store"}},
		{"report label", []string{"report", "--results", res, "--label", "nolabel"}, []string{"--label", "ID=NAME"}},
		{"report out", []string{"report", "--results", res, "--out", filepath.Join(dir, "r.pdf")}, []string{"--out", ".html"}},
		{"results list file", []string{"results", "list", "--results", file}, []string{"--results"}},
		{"results show file", []string{"results", "show", "latest", "--results", file}, []string{"--results"}},
		// cobra's own
		{"unknown flag", []string{"tpcc", "run", "--vu", "1"}, []string{"--vu"}},
		{"flag without value", []string{"tpcc", "run", "--vus"}, []string{"--vus"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runTierbench(t, c.args...)
			badInputLine(t, c.args, code, out, errOut, 2, c.want...)
			if strings.Contains(errOut, "hunter22") {
				t.Errorf("the password shows: %s", errOut)
			}
		})
	}
	for _, p := range []string{res, data, backups} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("bad input created %s (%v)", p, err)
		}
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("bad input left files in the disk target: %v", entries)
	}
	if b, _ := os.ReadFile(file); string(b) != "x" {
		t.Errorf("bad input changed %s: %q", file, b)
	}
}

// What the environment lacks is a one-line error that says what to do: a
// server that does not answer (exit 1), fio not installed (exit 1), a
// --pg-bin without pg_basebackup (bad input, exit 2). None needs PostgreSQL
// or fio.
func TestBadInputEnvironment(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	const closed = "postgres://u:hunter22@127.0.0.1:1/db"

	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"closed port check", []string{"tpcc", "check", "--dsn", closed}, 1, []string{"cannot connect", "127.0.0.1:1", "is the server running?", "tierbench server start"}},
		{"closed port build", []string{"tpcc", "build", "--dsn", closed, "--warehouses", "1"}, 1, []string{"cannot connect", "is the server running?"}},
		{"closed port run", []string{"tpcc", "run", "--dsn", closed, "--results", res, "--duration", "1s"}, 1, []string{"cannot connect", "is the server running?"}},
		{"closed port monitor", []string{"monitor", "--target", dir, "--dsn", closed, "--results", res}, 1, []string{"cannot connect", "is the server running?"}},
		{"closed port backup", []string{"backup", "run", "--dsn", closed, "--target", filepath.Join(dir, "b"), "--results", res}, 1, []string{"cannot connect", "is the server running?"}},
		{"no pg_basebackup", []string{"backup", "run", "--dsn", closed, "--target", filepath.Join(dir, "b"), "--results", res, "--pg-bin", "/nonexistent"}, 2, []string{"--pg-bin /nonexistent", "pg_basebackup", "apt-get install postgresql-client"}},
		{"fio given but missing", []string{"disk", "run", "--target", dir, "--results", res, "--fio", "/nonexistent/fio"}, 1, []string{"--fio /nonexistent/fio", "apt-get install fio"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runTierbench(t, c.args...)
			badInputLine(t, c.args, code, out, errOut, c.code, c.want...)
			if strings.Contains(errOut, "hunter22") {
				t.Errorf("the password shows: %s", errOut)
			}
		})
	}

	// fio not installed: a PATH without it.
	t.Run("fio not on PATH", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		args := []string{"disk", "run", "--target", dir, "--results", res}
		code, out, errOut := runTierbench(t, args...)
		badInputLine(t, args, code, out, errOut, 1, "fio is not installed", "apt-get install fio")
	})
	if _, err := os.Stat(res); !os.IsNotExist(err) {
		t.Errorf("a failed start created %s (%v)", res, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed starts left %v in %s", entries, dir)
	}
}

// A wrong password is one line saying the server refused it and what to
// check. It needs a server: the shared test server (integration test).
func TestConnectWrongPassword(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	u, pw, ok := strings.Cut(dsn, "@")
	if i := strings.LastIndex(u, ":"); !ok || i < 0 || pw == "" {
		t.Skipf("the test DSN carries no password: %s", dsn)
	} else {
		dsn = u[:i+1] + "wrong-password-42@" + pw
	}
	args := []string{"tpcc", "check", "--dsn", dsn}
	code, out, errOut := runTierbench(t, args...)
	badInputLine(t, args, code, out, errOut, 1, "password authentication failed", "check the user and password")
	if strings.Contains(errOut, "wrong-password-42") {
		t.Errorf("the password shows: %s", errOut)
	}
}
