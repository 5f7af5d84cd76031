package tpcc

// Ack is a New-Order the database acknowledged, committed or rolled back:
// an entry of the durability test's success log (3.5.4). Customer, Lines
// and FirstItem tell the acknowledged order's row from another with the
// same key: a rolled-back New-Order does not consume its number, so the
// district's next order takes it.
type Ack struct {
	W, D, OID  int
	Customer   int
	Lines      int
	FirstItem  int
	RolledBack bool
}

// NewAck is the success-log entry of an acknowledged New-Order.
func NewAck(in *NewOrderInput, out NewOrderOutput) Ack {
	a := Ack{W: in.W, D: in.D, OID: out.OID, Customer: in.C, Lines: len(in.Lines), RolledBack: out.RolledBack}
	if len(in.Lines) > 0 {
		a.FirstItem = int(in.Lines[0].ItemID)
	}
	return a
}
