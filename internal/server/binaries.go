package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Binaries are the PostgreSQL server programs tierbench runs.
type Binaries struct {
	Dir      string // the real directory holding them (symlinks resolved)
	Initdb   string
	PgCtl    string
	Postgres string
	Version  string // e.g. "15.14", from `postgres --version`
	Major    int    // e.g. 15 (9 for 9.6)
}

// debianRoot is where Debian and Ubuntu install one directory per major version.
const debianRoot = "/usr/lib/postgresql"

// FindBinaries locates initdb, pg_ctl and postgres: in pgBin when given (the
// --pg-bin flag), else in the first PATH directory that leads to all three
// (through symlinks: Debian puts only pg_ctl-style wrappers on PATH), else in
// the newest /usr/lib/postgresql/VERSION/bin.
func FindBinaries(pgBin string) (Binaries, error) {
	return findBinaries(pgBin, os.Getenv("PATH"), debianRoot)
}

func findBinaries(pgBin, pathEnv, debRoot string) (Binaries, error) {
	if pgBin != "" {
		dir, err := filepath.Abs(pgBin)
		if err != nil {
			return Binaries{}, err
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if !hasServerBinaries(dir) {
			return Binaries{}, fmt.Errorf("--pg-bin %s does not hold the PostgreSQL server programs (initdb, pg_ctl, postgres)", pgBin)
		}
		return loadBinaries(dir)
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			continue
		}
		for _, name := range []string{"postgres", "initdb", "pg_ctl"} {
			p := filepath.Join(d, name)
			if !isExecutable(p) {
				continue
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			if dir := filepath.Dir(real); hasServerBinaries(dir) {
				return loadBinaries(dir)
			}
		}
	}
	for _, dir := range debianBinDirs(debRoot) {
		if hasServerBinaries(dir) {
			return loadBinaries(dir)
		}
	}
	return Binaries{}, errors.New("no PostgreSQL server binaries found (looked in PATH and " + debRoot +
		"/*/bin); install them with `apt-get install postgresql` or pass --pg-bin DIR")
}

// debianBinDirs lists root/*/bin, newest version first: 16 before 15 before
// 10 before 9.6 (numeric, not lexical, order).
func debianBinDirs(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	type cand struct {
		dir string
		ver []int
	}
	var cands []cand
	for _, e := range entries {
		ver, ok := parseVersionParts(e.Name())
		if !ok {
			continue
		}
		cands = append(cands, cand{filepath.Join(root, e.Name(), "bin"), ver})
	}
	sort.SliceStable(cands, func(i, j int) bool { return versionLess(cands[j].ver, cands[i].ver) })
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.dir
	}
	return out
}

// parseVersionParts reads "9.6" as [9 6] and "15" as [15].
func parseVersionParts(s string) ([]int, bool) {
	var out []int
	for _, p := range strings.Split(s, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, len(out) > 0
}

func versionLess(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func hasServerBinaries(dir string) bool {
	for _, name := range []string{"postgres", "initdb", "pg_ctl"} {
		if !isExecutable(filepath.Join(dir, name)) {
			return false
		}
	}
	return true
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func loadBinaries(dir string) (Binaries, error) {
	b := Binaries{
		Dir:      dir,
		Initdb:   filepath.Join(dir, "initdb"),
		PgCtl:    filepath.Join(dir, "pg_ctl"),
		Postgres: filepath.Join(dir, "postgres"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, b.Postgres, "--version").Output()
	if err != nil {
		return Binaries{}, fmt.Errorf("%s --version: %w", b.Postgres, err)
	}
	b.Version, b.Major, err = parseServerVersion(string(out))
	if err != nil {
		return Binaries{}, fmt.Errorf("%s --version: %w", b.Postgres, err)
	}
	return b, nil
}

// parseServerVersion reads "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"
// as ("15.14", 15) and "postgres (PostgreSQL) 9.6.24" as ("9.6.24", 9).
func parseServerVersion(out string) (string, int, error) {
	fields := strings.Fields(out)
	for i, f := range fields {
		if f == "(PostgreSQL)" && i+1 < len(fields) {
			v := fields[i+1]
			digits := v
			if j := strings.IndexFunc(v, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); j >= 0 {
				digits = v[:j] // "16beta1" -> "16"
			}
			major, err := strconv.Atoi(strings.SplitN(digits, ".", 2)[0])
			if err != nil {
				break
			}
			return v, major, nil
		}
	}
	return "", 0, fmt.Errorf("version not understood: %q", strings.TrimSpace(out))
}

// majorString is how PG_VERSION names a major version: "15", or "9.6" before 10.
func majorString(version string, major int) string {
	if major >= 10 {
		return strconv.Itoa(major)
	}
	parts := strings.SplitN(version, ".", 3)
	if len(parts) >= 2 {
		return parts[0] + "." + parts[1]
	}
	return strconv.Itoa(major)
}
