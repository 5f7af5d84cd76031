package tpcc

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParseMix: an accepted mix has percentages 0..100 that add up to 100
// and, unless unchecked, meets 5.2.3's minimums; written out in the
// canonical key=percent form it parses back to the same mix; a checked mix
// is also accepted unchecked. Errors are one line.
func FuzzParseMix(f *testing.F) {
	for _, s := range []string{"no=45,p=43,os=4,d=4,sl=4", "no=100", "p=43,no=45,sl=4,d=4,os=4", " NO = 45 , P=43,os=4,d=4,sl=4",
		"no=45,p=43,os=4,d=4,sl=4,no=45", "no=45,NO=0,p=43,os=4,d=4,sl=4", "no=10,NO=45,p=33,os=4,d=4,sl=4",
		"no=50,p=50", "no=45,p=43,os=4,d=4", "no=-5,p=105", "no=1e2", "no=45;p=43", "", ",", "=", "x=100",
		"no=45,p=43,os=4,d=4,sl=4,", "no=9223372036854775807,p=1", "no=+45,p=43,os=4,d=4,sl=4", "no=45\n,p=43"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, unchecked bool) {
		m, err := ParseMix(s, unchecked)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("ParseMix(%q): error %q is empty or not one line", s, msg)
			}
			return
		}
		total := 0
		for k, n := range m {
			if n < 0 || n > 100 {
				t.Fatalf("ParseMix(%q) gave %s %d%%", s, Kind(k), n)
			}
			if !unchecked && float64(n) < minimumMix[k] {
				t.Fatalf("ParseMix(%q) gave %s %d%%, below the minimum", s, Kind(k), n)
			}
			total += n
		}
		if total != 100 {
			t.Fatalf("ParseMix(%q) = %v adds up to %d", s, m, total)
		}
		canon := fmt.Sprintf("no=%d,p=%d,os=%d,d=%d,sl=%d", m[NewOrder], m[Payment], m[OrderStatus], m[Delivery], m[StockLevel])
		if back, err := ParseMix(canon, unchecked); err != nil || back != m {
			t.Fatalf("ParseMix(%q) = %v, but %q parses as %v, %v", s, m, canon, back, err)
		}
		if back, err := ParseMix(s, true); err != nil || back != m {
			t.Fatalf("ParseMix(%q) = %v checked but %v, %v unchecked", s, m, back, err)
		}
		if len(NewMixDeck(m).cards) != 100 {
			t.Fatalf("the deck of %v does not hold 100 cards", m)
		}
	})
}
