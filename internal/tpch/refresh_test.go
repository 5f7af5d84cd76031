package tpch

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Update sets 1 and 2 at SF 0.01 are dbgen's byte for byte.
func TestRefreshSetsMatchDbgen(t *testing.T) {
	sc, _ := NewScale(0.01)
	dir := filepath.Join("testdata", "refresh-sf0.01")
	for n := 1; n <= 2; n++ {
		set, err := NewRefreshSet(sc, n)
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string][]byte{
			"orders.tbl.u" + strconv.Itoa(n): set.Orders, "lineitem.tbl.u" + strconv.Itoa(n): set.LineItems,
			"delete." + strconv.Itoa(n): set.DeleteFile(),
		} {
			want, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from dbgen's:\n%s\nwant\n%s", name, got, want)
			}
		}
	}
}

func TestRefreshOrders(t *testing.T) {
	for sf, want := range map[float64]int64{0.01: 10, 0.1: 150, 1: 1500, 10: 15000, 0.005: 0, 0.02: 30} {
		sc, _ := NewScale(sf)
		if got := sc.RefreshOrders(); got != want {
			t.Errorf("SF %g: %d orders a set; want %d", sf, got, want)
		}
	}
	sc, _ := NewScale(0.01)
	if _, err := NewRefreshSet(sc, 0); err == nil {
		t.Error("update set 0 was made")
	}
}
