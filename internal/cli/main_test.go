package cli_test

import (
	"testing"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
