package experiment_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
)

// tpcc generate writes the data with every engine's scripts beside it, from
// the engine table: a new engine's row brings its own files.
func TestGenerateWritesEveryEnginesScripts(t *testing.T) {
	dir := t.TempDir()
	res, err := experiment.Generate(context.Background(), 1, 2, dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files == 0 || res.Bytes == 0 {
		t.Fatalf("result %+v; want data files", res)
	}
	for _, name := range []string{"tasks.txt", "postgres-schema.sql", "postgres-indexes.sql", "postgres-analyze.sql",
		"mariadb-schema.sql", "mariadb-indexes.sql"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(data) == 0 {
			t.Errorf("%s: %v, %d bytes", name, err, len(data))
		}
		if strings.HasSuffix(name, "-schema.sql") && !strings.Contains(strings.ToUpper(string(data)), "CREATE TABLE") {
			t.Errorf("%s creates no table", name)
		}
	}
	for _, e := range all.Engines {
		if e.Scripts == nil {
			t.Errorf("engine %s has no scripts for tpcc generate", e.Name)
		}
	}
}
