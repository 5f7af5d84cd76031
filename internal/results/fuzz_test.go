package results

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRunLookup: whatever a user gives as a run (results show RUN, report
// --run ID), Run finds the run with that id, the one run whose id starts
// with it, or the latest — else it says not found or ambiguous; it never
// finds a run the id does not name.
func FuzzRunLookup(f *testing.F) {
	for _, s := range []string{"latest", "", "2", "20", "20261121", "%", "_", "*", "'", "' OR 1=1 --", "é", "\x00", "LATEST", " "} {
		f.Add(s)
	}
	s, err := Open(filepath.Join(f.TempDir(), "results"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	ctx := context.Background()
	var ids []string
	for range 3 {
		r, err := s.CreateRun(ctx, "tpcc", "", nil)
		if err != nil {
			f.Fatal(err)
		}
		ids = append(ids, r.ID)
		f.Add(r.ID)
		f.Add(r.ID[:len(r.ID)-1])
	}
	f.Fuzz(func(t *testing.T, id string) {
		r, err := s.Run(ctx, id)
		matches := 0
		for _, x := range ids {
			if id != "" && strings.HasPrefix(x, id) {
				matches++
			}
		}
		switch {
		case err == nil && id == "latest":
		case err == nil:
			if !strings.HasPrefix(r.ID, id) || id == "" || (r.ID != id && matches != 1) {
				t.Fatalf("Run(%q) found %s", id, r.ID)
			}
		case errors.Is(err, ErrNotFound):
			if matches > 0 {
				t.Fatalf("Run(%q): not found, but %d ids start with it", id, matches)
			}
		case errors.Is(err, ErrAmbiguous):
			if matches < 2 {
				t.Fatalf("Run(%q): ambiguous, but %d ids start with it", id, matches)
			}
		default:
			t.Fatalf("Run(%q): %v", id, err)
		}
	})
}
