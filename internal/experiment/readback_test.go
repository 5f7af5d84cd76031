package experiment_test

// Reading a run back as a front end would: its document as the command
// line prints it, and its report.

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/results"
)

// asDoc decodes a run's result as its JSON document into doc.
func asDoc(t *testing.T, result any, doc any) string {
	t.Helper()
	b, err := json.Marshal(result)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return string(b)
}

// writeReport writes the report of the store in dir as `tierbench report`
// does.
func writeReport(t *testing.T, dir string, o report.Options) report.Written {
	t.Helper()
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w, err := report.Write(context.Background(), store, o)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	return w
}
