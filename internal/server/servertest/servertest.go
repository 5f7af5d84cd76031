// Package servertest is the machinery behind the test harnesses pgtest and
// mariatest: one managed server per engine per test process, started on
// first use, a fresh database per test, a test's own server when it must
// stop, kill or copy it, and the clean-up of servers whose test process
// died. Tests use pgtest or mariatest, not this package.
package servertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/testenv"
)

// Harness gives tests a real server of one engine.
type Harness struct {
	Engine  string // server.Options.Engine
	Display string // the engine's name in messages, e.g. "PostgreSQL"
	// EnvDSN names the variable that points the tests at an existing
	// server instead of a managed one.
	EnvDSN string
	// Settings of the shared server: test data is thrown away, so
	// durability would only slow the tests.
	Settings map[string]string
	// Binaries says whether the engine's server binaries are installed.
	Binaries func() error
	// CreateDB and DropDB run on the server of adminDSN; WithDatabase
	// points a DSN at another database.
	CreateDB     func(ctx context.Context, adminDSN, name string) error
	DropDB       func(ctx context.Context, adminDSN, name string) error
	WithDatabase func(dsn, name string) (string, error)

	once      sync.Once
	templates sync.Map // name → *template (StartCloned)
	dir       string   // the world-searchable directory holding the data directory
	dataDir   string
	dsn       string
	missing   error // no server binaries: skip (or fail in CI)
	err       error // the server did not start
}

// started lists the harnesses whose shared server Main must stop.
var started struct {
	sync.Mutex
	list []*Harness
	dirs []string // the templates' directories (StartCloned)
}

// MissingBinaries skips the test (or, when CI=true, fails it) with the reason.
func (h *Harness) MissingBinaries(t testing.TB, reason error) {
	t.Helper()
	testenv.SkipOrFail(t, "%s: %v", h.Display, reason)
}

// RequireBinaries skips the test (fails it in CI) when the engine's server
// binaries are not installed.
func (h *Harness) RequireBinaries(t testing.TB) {
	t.Helper()
	if err := h.Binaries(); err != nil {
		h.MissingBinaries(t, err)
	}
}

// TempDir is a directory for a managed data directory, removed when the test
// ends. Unlike t.TempDir (mode 0700), it is world-searchable, so that when the
// tests run as root the unprivileged user running the server can enter it.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := worldDir("tierbench-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// StartManaged starts a managed server of the test's own in a new data
// directory (DIR/data of a TempDir), stopped when the test ends; for tests
// that stop, kill or copy their server.
func (h *Harness) StartManaged(t testing.TB, ctx context.Context) server.Info {
	t.Helper()
	h.RequireBinaries(t)
	return h.startOwn(t, ctx, server.Options{Engine: h.Engine, DataDir: filepath.Join(TempDir(t), "data")})
}

// startOwn starts the server of opts, stopped when the test ends.
func (h *Harness) startOwn(t testing.TB, ctx context.Context, opts server.Options) server.Info {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		server.Stop(ctx, opts.DataDir, "immediate")
	})
	info, err := server.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// StartCloned starts a managed server of the test's own, stopped when the
// test ends, from a copy of a template: a managed server that fill filled
// once per test process for name, then stopped. For tests that stop, kill
// or copy their server and need data in it first (a TPC-C build): a copy
// of the template's files (server.Clone) where a MariaDB build of one
// warehouse took 14 s in a loaded run. Main removes the templates.
func (h *Harness) StartCloned(t testing.TB, ctx context.Context, name string, fill func(ctx context.Context, dsn string) error) server.Info {
	t.Helper()
	h.RequireBinaries(t)
	v, _ := h.templates.LoadOrStore(name, &template{})
	tmpl := v.(*template)
	tmpl.once.Do(func() { tmpl.dataDir, tmpl.err = h.makeTemplate(ctx, fill) })
	if tmpl.err != nil {
		t.Fatalf("the %s template %s: %v", h.Display, name, tmpl.err)
	}
	dataDir := filepath.Join(TempDir(t), "data")
	if err := server.Clone(ctx, tmpl.dataDir, dataDir); err != nil {
		t.Fatal(err)
	}
	return h.startOwn(t, ctx, server.Options{Engine: h.Engine, DataDir: dataDir, NewPort: true})
}

// template is a stopped managed server that StartCloned copies.
type template struct {
	once    sync.Once
	dataDir string
	err     error
}

// makeTemplate starts a managed server in a directory of its own (which
// Main removes, or the next process's reapOrphans once this one died),
// fills it and stops it.
func (h *Harness) makeTemplate(ctx context.Context, fill func(ctx context.Context, dsn string) error) (string, error) {
	dir, info, err := h.startOwned(ctx, nil)
	if err != nil {
		return "", err
	}
	started.Lock()
	started.dirs = append(started.dirs, dir)
	started.Unlock()
	ferr := fill(ctx, info.DSN)
	if _, err := server.Stop(context.WithoutCancel(ctx), info.DataDir, "fast"); err != nil && ferr == nil {
		ferr = err
	}
	return info.DataDir, ferr
}

func worldDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// DSN is the DSN of this process's shared server (a superuser), started on
// first use, or the EnvDSN variable's when set.
func (h *Harness) DSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv(h.EnvDSN); dsn != "" {
		return dsn
	}
	h.once.Do(h.startShared)
	if h.missing != nil {
		h.MissingBinaries(t, h.missing)
	}
	if h.err != nil {
		t.Fatalf("starting the shared %s test server: %v", h.Display, h.err)
	}
	return h.dsn
}

func (h *Harness) sharedPrefix() string { return "tierbench-" + h.Engine + "test-" }

func (h *Harness) startShared() {
	if err := h.Binaries(); err != nil {
		h.missing = err
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reapOrphans(ctx, h.sharedPrefix())
	dir, info, err := h.startOwned(ctx, h.Settings)
	if err != nil {
		h.err = err
		return
	}
	h.dir, h.dataDir, h.dsn = dir, info.DataDir, info.DSN
	started.Lock()
	started.list = append(started.list, h)
	started.Unlock()
}

// startOwned starts a managed server with settings in DIR/data of a new
// world-searchable directory whose ownerFile names this process, so that
// reapOrphans removes it should the process die first. On an error nothing
// is left.
func (h *Harness) startOwned(ctx context.Context, settings map[string]string) (dir string, info server.Info, err error) {
	if dir, err = worldDir(h.sharedPrefix()); err != nil {
		return "", info, err
	}
	if err = os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err == nil {
		info, err = server.Start(ctx, server.Options{Engine: h.Engine, DataDir: filepath.Join(dir, "data"), Settings: settings})
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", info, err
	}
	return dir, info, nil
}

// ownerFile, in a shared server's directory, records the PID of the test
// process that owns it.
const ownerFile = "owner.pid"

// reapOrphans stops and removes shared servers whose test process died
// without reaching Main's cleanup (a panic, a -timeout, a kill).
func reapOrphans(ctx context.Context, prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		if _, err := server.Stop(ctx, filepath.Join(dir, "data"), "immediate"); err != nil {
			var de *server.DataDirError
			if !errors.As(err, &de) { // a directory without a server is just removed
				continue
			}
		}
		os.RemoveAll(dir)
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// NewDatabase creates an empty database on the shared server (or on the
// EnvDSN variable's), returns its DSN and drops it when the test ends.
func (h *Harness) NewDatabase(t testing.TB) string {
	t.Helper()
	base := h.DSN(t)
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := "tb_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.CreateDB(ctx, base, name); err != nil {
		t.Fatalf("creating test database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.DropDB(ctx, base, name); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	dsn, err := h.WithDatabase(base, name)
	if err != nil {
		t.Fatalf("%s is not a valid DSN: %v", h.EnvDSN, err)
	}
	return dsn
}

// Main runs the tests, then stops the shared servers that were started and
// removes their directories. pgtest.Main and mariatest.Main are this.
func Main(m *testing.M) {
	DefaultParallel(2)
	code := m.Run()
	started.Lock()
	for _, h := range started.list {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := server.Stop(ctx, h.dataDir, "immediate"); err != nil {
			fmt.Fprintf(os.Stderr, "servertest: stopping the shared %s server: %v\n", h.Display, err)
		}
		cancel()
		os.RemoveAll(h.dir)
	}
	for _, dir := range started.dirs {
		os.RemoveAll(dir)
	}
	started.Unlock()
	os.Exit(code)
}

// DefaultParallel makes -parallel, when the command line does not set it,
// perCPU times GOMAXPROCS rather than GOMAXPROCS: the parallel tests of
// servers, timed runs and other processes spend much of their time waiting
// for them, which on a small host (CI's has 2 cores) leaves the CPU idle
// with only GOMAXPROCS of them at a time. Main uses 2; a package whose
// tests measure little and wait much can ask for more first (the first
// call wins). A TestMain calls it before m.Run.
func DefaultParallel(perCPU int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(perCPU*runtime.GOMAXPROCS(0)))
	}
}
