package reporttest

import (
	"os"
	"path/filepath"
	"testing"
)

// ArtifactDir is where tests keep artefacts such as screenshots:
// $TIERBENCH_ARTIFACTS when set, else test-artifacts in the repository root
// (the nearest directory above the working directory that holds go.mod). The
// directory is created; CI can upload it after a failed run.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TIERBENCH_ARTIFACTS")
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatalf("artifact dir: %v", err)
		}
		dir = filepath.Join(root, "test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifact dir: %v", err)
	}
	return dir
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", &os.PathError{Op: "find go.mod above", Path: wd, Err: os.ErrNotExist}
		}
		dir = parent
	}
}
