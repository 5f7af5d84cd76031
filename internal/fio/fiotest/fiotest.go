// Package fiotest is what tests that run fio share.
package fiotest

import (
	"os/exec"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// Require skips a test without fio, unless CI=true, where integration
// tests must run: there it fails.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		testenv.SkipOrFail(t, "fio is not installed (make setup installs it)")
	}
}
