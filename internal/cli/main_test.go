package cli_test

import (
	"os"
	"testing"

	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/server/servertest"
)

// TestMain clears the user's database settings from the process
// environment once, for every test: tierbench's commands get theirs from
// the test (runTierbenchWith), but pgx, the tools tierbench starts and a
// tierbench binary the tests run read the process's, where a developer's
// $TIERBENCH_DSN, $PGPASSWORD or ~/.pgpass must not reach them: a login
// without a password must not find one elsewhere.
//
// The cli tests check outputs, not measurements: four parallel tests per
// core keep the CPU busy and start the longest ones (TestSecrets) early
// (290 s for the package at two per core, 250 s at four).
func TestMain(m *testing.M) {
	servertest.DefaultParallel(4)
	os.Unsetenv("TIERBENCH_DSN")
	os.Unsetenv("PGPASSWORD")
	os.Setenv("PGPASSFILE", os.DevNull)
	pgtest.Main(m)
}
