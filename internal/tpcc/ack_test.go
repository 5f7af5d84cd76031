package tpcc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A durability cycle's violations are written with the success log's keys,
// read back as written, and stores written before, whose violations carry
// Go's field names, stay readable.
func TestAckJSON(t *testing.T) {
	acks := []Ack{{W: 1, D: 2, OID: 3001, Customer: 4, Lines: 5, FirstItem: 6}, {W: 7, D: 8, OID: 9, Customer: 10, Lines: 11, FirstItem: 12, RolledBack: true}}
	b, err := json.Marshal(acks)
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"w_id":1,"d_id":2,"o_id":3001,"c_id":4,"ol_cnt":5,"first_item":6,"rolled_back":false},` +
		`{"w_id":7,"d_id":8,"o_id":9,"c_id":10,"ol_cnt":11,"first_item":12,"rolled_back":true}]`
	if string(b) != want {
		t.Errorf("marshalled as %s\nwant %s", b, want)
	}
	var back []Ack
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, acks) {
		t.Errorf("read back as %+v (%v), want %+v", back, err, acks)
	}

	// What the earlier Ack, without tags, wrote into a cycle's document.
	type earlierAck struct {
		W, D, OID  int
		Customer   int
		Lines      int
		FirstItem  int
		RolledBack bool
	}
	old, err := json.Marshal(map[string]any{"cycle": 1, "violations": []earlierAck{
		{W: 1, D: 2, OID: 3001, Customer: 4, Lines: 5, FirstItem: 6}, {7, 8, 9, 10, 11, 12, true}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(old), `"OID":3001`) {
		t.Fatalf("the earlier form is not Go's field names: %s", old)
	}
	var cycle struct {
		Violations []Ack `json:"violations"`
	}
	if err := json.Unmarshal(old, &cycle); err != nil || !reflect.DeepEqual(cycle.Violations, acks) {
		t.Errorf("an earlier store's violations %s read as %+v (%v), want %+v", old, cycle.Violations, err, acks)
	}

	var bad Ack
	if err := json.Unmarshal([]byte(`{"w_id":"one"}`), &bad); err == nil {
		t.Errorf("a w_id that is not a number was read as %+v", bad)
	}
}
