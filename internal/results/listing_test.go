package results

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// List counts each run's steps and gives a TPC-C run its best NOPM, and
// only a TPC-C run: a disk point's document with a "nopm" key has none.
func TestStoreList(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	add := func(kind string, metrics ...string) string { return addRun(t, s, kind, metrics...) }
	tpcc := add("tpcc", `{"nopm":120}`, `{"nopm":340}`, `{"nopm":200}`)
	disk := add("disk", `{"nopm":999}`)
	empty := add("tpcc")
	list, total, err := s.List(ctx, ListQuery{})
	if err != nil || total != 3 {
		t.Fatal(total, err)
	}
	got := map[string]Listed{}
	for _, l := range list {
		got[l.ID] = l
	}
	if l := got[tpcc]; l.Steps != 3 || l.BestNOPM == nil || *l.BestNOPM != 340 {
		t.Errorf("tpcc run: %d steps, best %v; want 3 and 340", l.Steps, l.BestNOPM)
	}
	if l := got[disk]; l.Steps != 1 || l.BestNOPM != nil {
		t.Errorf("disk run: %d steps, best %v; want 1 and none", l.Steps, l.BestNOPM)
	}
	if l := got[empty]; len(list) != 3 || l.Steps != 0 || l.BestNOPM != nil {
		t.Errorf("%d runs; the run without steps: %+v", len(list), l)
	}
	// A page: newest first, filtered by kind, the total counting the
	// filtered runs; the steps of the page's runs only.
	page, total, err := s.List(ctx, ListQuery{Kind: "tpcc", Offset: 1, Limit: 1})
	if err != nil || total != 2 || len(page) != 1 || page[0].ID != tpcc || page[0].Steps != 3 || *page[0].BestNOPM != 340 {
		t.Errorf("the second tpcc run: %+v of %d, %v; want %s of 2", page, total, err, tpcc)
	}
	shown, err := s.Show(ctx, tpcc)
	if err != nil || shown.Run.ID != tpcc || len(shown.Steps) != 3 {
		t.Errorf("Show = %+v, %v", shown.Run, err)
	}
	if sh, err := s.Show(ctx, empty); err != nil || sh.Steps == nil {
		t.Errorf("a run without steps shows steps %v (want [] for JSON), %v", sh.Steps, err)
	}
}

// A run recorded under an id handed out earlier keeps it; the same id a
// second time is refused rather than given a fresh suffix.
func TestStoreCreateRunAs(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id := NewRunID()
	r, err := s.CreateRunAs(ctx, id, "tpcc", "", nil)
	if err != nil || r.ID != id {
		t.Fatalf("CreateRunAs(%s) = %s, %v", id, r.ID, err)
	}
	if _, err := s.CreateRunAs(ctx, id, "tpcc", "", nil); err == nil {
		t.Errorf("a second run under %s was recorded", id)
	}
	if got, err := s.Run(ctx, id); err != nil || got.Kind != "tpcc" {
		t.Errorf("Run(%s) = %+v, %v", id, got, err)
	}
}

// A TPC-H run's headline is its summary's geometric mean, when a power
// test finished; a run cut short before one did has none.
func TestStoreListTPCH(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := func(summary string) string { return finishedRun(t, s, "tpch", summary) }
	done := run(`{"geomean_seconds":{"mean":1.25,"stddev":0.1,"n":2,"ci95_low":0.5,"ci95_high":2}}`)
	cut := run(`{"geomean_seconds":{"mean":null,"stddev":null,"n":0}}`)
	list, _, err := s.List(ctx, ListQuery{Kind: "tpch"})
	if err != nil || len(list) != 2 {
		t.Fatal(list, err)
	}
	for _, l := range list {
		switch {
		case l.ID == done && (l.GeoMean == nil || *l.GeoMean != 1.25):
			t.Errorf("a finished run's geometric mean %v; want 1.25", l.GeoMean)
		case l.ID == cut && l.GeoMean != nil:
			t.Errorf("a run with no power test has geometric mean %v; want none", *l.GeoMean)
		}
	}
}

// A durability run's headline is its summary's total: cycles, lost and the
// verdict; a run with no cycle finished has none.
func TestStoreListDurability(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := func(summary string) string { return finishedRun(t, s, "durability", summary) }
	lost := run(`{"fault":"kill","total":{"cycles":3,"acknowledged":90,"lost":2,"failed_cycles":1,"ok":false}}`)
	none := run(`{"fault":"kill","cycles":[],"total":{"cycles":0,"ok":true}}`)
	list, _, err := s.List(ctx, ListQuery{Kind: "durability"})
	if err != nil || len(list) != 2 {
		t.Fatal(list, err)
	}
	for _, l := range list {
		switch {
		case l.ID == lost && (l.Durability == nil || *l.Durability != DurabilityVerdict{Cycles: 3, Lost: 2, OK: false}):
			t.Errorf("a run that lost orders: %+v; want 3 cycles, 2 lost, not ok", l.Durability)
		case l.ID == none && l.Durability != nil:
			t.Errorf("a run with no cycle: %+v; want no verdict", *l.Durability)
		}
	}
}

// finishedRun records a complete run of kind with summary, and returns its
// id.
func finishedRun(t *testing.T, s *Store, kind, summary string) string {
	t.Helper()
	ctx := context.Background()
	r, err := s.CreateRun(ctx, kind, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, r.ID, StatusComplete, json.RawMessage(summary)); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// Each kind's headline says its outcome in a line, from its summary (and a
// TPC-C run's steps); a run without either says nothing.
func TestListHeadline(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	want := map[string]string{}
	add := func(kind, summary, headline string, nopm ...int) {
		t.Helper()
		var metrics []string
		for _, n := range nopm {
			metrics = append(metrics, fmt.Sprintf(`{"nopm":%d}`, n))
		}
		id := addRun(t, s, kind, metrics...)
		if summary != "" {
			if err := s.FinishRun(ctx, id, StatusComplete, json.RawMessage(summary)); err != nil {
				t.Fatal(err)
			}
		}
		want[id] = headline
	}
	add("tpcc", `{"steps":[]}`, "best NOPM 17,284", 12000, 17284)
	add("tpcc", `{"knee":{"offered_tpm":12000,"next_offered_tpm":24000,"why":""}}`, "best NOPM 3,563; knee at 12,000 TPM offered", 3563)
	add("tpcc", `{"knee":{"offered_tpm":72582,"why":""}}`, "best NOPM 30,445; every rate held, up to 72,582 TPM offered", 30445)
	add("tpcc", `{"knee":{"offered_tpm":0,"why":""}}`, "best NOPM 90; no rate held", 90)
	add("tpcc", "", "")
	add("tpch", `{"geomean_seconds":{"mean":0.0191,"n":1}}`, "geometric mean 0.019 s")
	add("durability", `{"total":{"cycles":3,"lost":2,"ok":false}}`, "3 cycles, 2 lost, FAILED")
	add("disk", `{"points":[{"name":"a","read":{"iops":900}},{"name":"b","read":{"iops":700},"write":{"iops":300}}]}`,
		"2 points, best 1,000 IOPS (b)")
	add("disk", `{"points":[{"name":"r-200","read":{"iops":200}}],"knees":[{"point":"r","offered_iops":400},{"point":"w","offered_iops":100,"next_offered_iops":200}]}`,
		"1 point, best 200 IOPS (r-200); knees at ≥400/100 IOPS offered")
	add("backup", `{"stats":{"backup":{"seconds":{"mean":12.34,"n":3}},"restore":{"seconds":{"mean":20,"n":3}}}}`,
		"backup 12.3 s, restore 20.0 s (mean of 3 cycles)")
	add("space", `{}`, "")
	list, _, err := s.List(ctx, ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if l.Headline != want[l.ID] {
			t.Errorf("%s run %s: headline %q; want %q", l.Kind, l.ID, l.Headline, want[l.ID])
		}
	}
}

// addRun records a run of kind with a step of each of metrics' documents.
func addRun(t *testing.T, s *Store, kind string, metrics ...string) string {
	t.Helper()
	ctx := context.Background()
	r, err := s.CreateRun(ctx, kind, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range metrics {
		now := time.Now()
		if err := s.AddStep(ctx, Step{RunID: r.ID, Index: i, Name: "s", StartedAt: now, MeasureStart: now, MeasureEnd: now,
			Metrics: json.RawMessage(m)}); err != nil {
			t.Fatal(err)
		}
	}
	return r.ID
}
