package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

func TestSettings(t *testing.T) {
	db, _ := openTest(t, pgtest.NewDatabase(t))
	version, settings, err := db.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if version == "" {
		t.Error("empty server version")
	}
	got := map[string]string{}
	var names []string
	for _, s := range settings {
		if _, dup := got[s.Name]; dup {
			t.Errorf("%s listed twice", s.Name)
		}
		got[s.Name] = s.Value
		names = append(names, s.Name)
	}
	for _, name := range []string{"shared_buffers", "fsync", "max_wal_size", "block_size"} {
		if got[name] == "" {
			t.Errorf("%s missing or empty in %v", name, settings)
		}
	}
	// The server's subset of settingNames, in settingNames' order.
	want := slices.DeleteFunc(slices.Clone(settingNames), func(n string) bool { _, ok := got[n]; return !ok })
	if !slices.Equal(names, want) {
		t.Errorf("settings in order %v, want %v", names, want)
	}
	if len(settings) < len(settingNames)-2 {
		t.Errorf("only %d of %d settings: %v", len(settings), len(settingNames), names)
	}
	t.Logf("PostgreSQL %s: %v", version, settings)
}
