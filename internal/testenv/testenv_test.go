package testenv

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that notes how a helper ended the test: the
// first Fatalf or Skipf, which would have stopped it.
type recorder struct {
	testing.TB
	ended string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, a ...any) { r.end("fail: " + fmt.Sprintf(format, a...)) }

func (r *recorder) Skipf(format string, a ...any) { r.end("skip: " + fmt.Sprintf(format, a...)) }

func (r *recorder) end(how string) {
	if r.ended == "" {
		r.ended = how
	}
}

// A missing requirement skips with its reason, and fails under CI=true,
// which must run every test.
func TestSkipOrFail(t *testing.T) {
	for _, c := range []struct{ ci, want string }{
		{"", "skip: skipping: no fio on PATH"},
		{"false", "skip: skipping: no fio on PATH"},
		{"true", "fail: CI=true needs this test to run: no fio on PATH"},
	} {
		t.Setenv("CI", c.ci)
		r := &recorder{TB: t}
		SkipOrFail(r, "no %s on PATH", "fio")
		if r.ended != c.want {
			t.Errorf("CI=%q: %q; want %q", c.ci, r.ended, c.want)
		}
	}
}
