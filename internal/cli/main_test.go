package cli_test

import (
	"os"
	"testing"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// TestMain clears the user's database settings from the process
// environment once, for every test: tierbench's commands get theirs from
// the test (runTierbenchWith), but pgx, the tools tierbench starts and a
// tierbench binary the tests run read the process's, where a developer's
// $TIERBENCH_DSN, $PGPASSWORD or ~/.pgpass must not reach them: a login
// without a password must not find one elsewhere.
func TestMain(m *testing.M) {
	os.Unsetenv("TIERBENCH_DSN")
	os.Unsetenv("PGPASSWORD")
	os.Setenv("PGPASSFILE", os.DevNull)
	pgtest.Main(m)
}
