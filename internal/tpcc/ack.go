package tpcc

import "encoding/json"

// Ack is a New-Order the database acknowledged, committed or rolled back:
// an entry of the durability test's success log (3.5.4). Customer, Lines
// and FirstItem tell the acknowledged order's row from another with the
// same key: a rolled-back New-Order does not consume its number, so the
// district's next order takes it.
//
// In JSON (a durability cycle's violations) its keys are those of the
// success log's line: w_id, d_id, o_id, c_id, ol_cnt, first_item and
// rolled_back.
type Ack struct {
	W          int  `json:"w_id"`
	D          int  `json:"d_id"`
	OID        int  `json:"o_id"`
	Customer   int  `json:"c_id"`
	Lines      int  `json:"ol_cnt"`
	FirstItem  int  `json:"first_item"`
	RolledBack bool `json:"rolled_back"`
}

// UnmarshalJSON reads an Ack with its keys, or with Go's field names (W,
// D, OID, Customer, Lines, FirstItem, RolledBack), which stores written
// before the keys were named still hold.
func (a *Ack) UnmarshalJSON(b []byte) error {
	type keyed Ack // without this method
	var k keyed
	if err := json.Unmarshal(b, &k); err != nil {
		return err
	}
	var old struct {
		W, D, OID, Customer, Lines, FirstItem *int
		RolledBack                            *bool
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	for _, f := range []struct {
		from *int
		to   *int
	}{{old.W, &k.W}, {old.D, &k.D}, {old.OID, &k.OID},
		{old.Customer, &k.Customer}, {old.Lines, &k.Lines}, {old.FirstItem, &k.FirstItem}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	if old.RolledBack != nil {
		k.RolledBack = *old.RolledBack
	}
	*a = Ack(k)
	return nil
}

// NewAck is the success-log entry of an acknowledged New-Order.
func NewAck(in *NewOrderInput, out NewOrderOutput) Ack {
	a := Ack{W: in.W, D: in.D, OID: out.OID, Customer: in.C, Lines: len(in.Lines), RolledBack: out.RolledBack}
	if len(in.Lines) > 0 {
		a.FirstItem = int(in.Lines[0].ItemID)
	}
	return a
}
