// Package fiotest is what tests that run fio share.
package fiotest

import (
	"os"
	"os/exec"
	"testing"
)

// Require skips a test without fio, unless CI=true, where integration
// tests must run: there it fails.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("fio is not installed, and CI=true: integration tests must run (make setup installs it)")
		}
		t.Skip("fio is not installed (make setup installs it)")
	}
}
