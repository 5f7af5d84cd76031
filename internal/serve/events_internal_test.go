package serve

import (
	"strings"
	"testing"
)

// A log keeps its newest events for replay, numbered from 1 without gaps;
// after(id) is what a client that saw id missed; a done event is the last;
// a follower's channel is closed at the next event.
func TestEventLog(t *testing.T) {
	t.Parallel()
	l := newEventLog()
	l.limit = 3
	_, _, wake := l.after(0)
	for i := range 5 {
		l.add("tick", map[string]int{"i": i})
	}
	select {
	case <-wake:
	default:
		t.Error("a follower was not woken by a new event")
	}
	ids := func(evs []event) (out []int) {
		for _, e := range evs {
			out = append(out, e.ID)
		}
		return out
	}
	if evs, done, _ := l.after(0); len(evs) != 3 || evs[0].ID != 3 || evs[2].ID != 5 || done {
		t.Errorf("after(0) = %v, done %v; want events 3 to 5 (the older ones dropped)", ids(evs), done)
	}
	if evs, _, _ := l.after(4); len(evs) != 1 || evs[0].ID != 5 || !strings.Contains(string(evs[0].Data), `"i":4`) {
		t.Errorf("after(4) = %v", ids(evs))
	}
	if evs, _, _ := l.after(9); len(evs) != 0 {
		t.Errorf("after(9) = %v; want none", ids(evs))
	}
	l.add("done", doneDoc{Status: "complete"})
	l.add("tick", nil)
	evs, done, _ := l.after(5)
	if len(evs) != 1 || evs[0].Name != "done" || evs[0].ID != 6 || !done {
		t.Errorf("after done: %v (%v); want only done, as event 6", ids(evs), done)
	}
}

// apiWords names every flag of a command-line message by its JSON key,
// and leaves dashes that name no flag alone.
func TestAPIWords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"--vus 0 is out of range":                            "vus 0 is out of range",
		"--all-warehouses: bad value; see --keying-thinking": "all_warehouses: bad value; see keying_thinking",
		"give (--noisy-cpu 0) or a-b":                        "give (noisy_cpu 0) or a-b",
		"--dsn: postgres://u@h/db-1 -- is":                   "dsn: postgres://u@h/db-1 -- is",
	} {
		if got := apiWords(in); got != want {
			t.Errorf("apiWords(%q) = %q; want %q", in, got, want)
		}
	}
}
