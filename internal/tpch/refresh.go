package tpch

import (
	"fmt"
	"strconv"
)

// The refresh functions' data (clause 2.5; dbgen -U): update set n holds
// new orders with their lines, which RF1 inserts, and the keys of as many
// loaded orders, which RF2 deletes with their lines. Each set is 0.1% of
// the orders: 1,500 at SF 1.

// RefreshOrders is how many orders each update set inserts and deletes:
// dbgen's base/10000 · scale · 10 in its integer arithmetic, where below SF
// 1 the base is the scaled count and the scale 1 (10 at SF 0.01, 150 at SF
// 0.1).
func (s Scale) RefreshOrders() int64 {
	return s.Orders / s.mult / 10000 * s.mult * 10
}

// MaxRefreshSets is the most update sets: dbgen gives sets 1 to 999 the
// second slot of the order keys; set 1000 would take the third.
const MaxRefreshSets = 999

// RefreshSet is update set n (from 1) at scale s: the new orders and their
// lines in the reference format (dbgen's orders.tbl.uN and
// lineitem.tbl.uN), and the keys of the orders to delete (delete.N).
type RefreshSet struct {
	N         int
	Orders    []byte
	LineItems []byte
	Deletes   []int64
}

// NewRefreshSet makes update set n. Its new orders are generated as rows
// after the loaded ones: the streams go on where the last loaded order and
// the earlier sets left them. Their keys take the second 8 of every 32
// keys, which no loaded order has; the deleted keys are those of the loaded
// orders with the same row numbers.
func NewRefreshSet(s Scale, n int) (RefreshSet, error) {
	if n < 1 || n > MaxRefreshSets {
		return RefreshSet{}, fmt.Errorf("update set %d is out of range; give 1 to %d", n, MaxRefreshSets)
	}
	count := s.RefreshOrders()
	first := int64(n-1)*count + 1
	g := newGenerator(s)
	g.keySeq = 1
	g.skipTo(tOrders, tLineItem, s.Orders+first)
	set := RefreshSet{N: n}
	for i := first; i < first+count; i++ {
		set.Orders, set.LineItems = g.order(set.Orders, set.LineItems, i, writeBoth)
		set.Deletes = append(set.Deletes, orderKey(i, 0))
	}
	return set, nil
}

// DeleteFile is the set's delete.N: each key followed by '|'.
func (r RefreshSet) DeleteFile() []byte {
	var b []byte
	for _, k := range r.Deletes {
		b = append(strconv.AppendInt(b, k, 10), '|', '\n')
	}
	return b
}
