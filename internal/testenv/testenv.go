// Package testenv says what a test may rely on here. A test whose
// requirement is missing skips with the reason, except under CI=true, where
// every test must run and a missing requirement fails it.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// CI reports whether the tests run under CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail skips the test with the reason, or fails it under CI=true.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("CI=true needs this test to run: %s", reason)
	}
	t.Skipf("skipping: %s", reason)
}

// NeedRoot is SkipOrFail for a test that needs root: why says what for
// ("losetup and mount").
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		SkipOrFail(t, "needs root (%s), and runs as uid %d", why, os.Geteuid())
	}
}
