package tier

import (
	"strings"
	"testing"
)

func TestParseCompsize(t *testing.T) {
	out := `Processed 2 files, 115 regular extents (115 refs), 0 inline.
Type       Perc     Disk Usage   Uncompressed Referenced  
TOTAL        3%     471040       12972032     12972032    
none       100%     20480        20480        20480       
zstd         3%     450560       12951552     12951552    
`
	s, err := parseCompsize(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := (StoredBytes{Logical: 12972032, Uncompressed: 12972032, Disk: 471040, Ratio: 12972032.0 / 471040, Tool: "compsize"}); s != want {
		t.Errorf("parseCompsize = %+v; want %+v", s, want)
	}
	for _, bad := range []string{
		"",
		strings.Replace(out, "TOTAL", "total", 1),
		strings.Replace(out, "471040 ", "460K ", 1), // without -b
	} {
		if s, err := parseCompsize(bad); err == nil {
			t.Errorf("parseCompsize(%q) = %+v; want an error", bad, s)
		}
	}
}
