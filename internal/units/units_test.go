package units

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	cases := map[string]int64{
		"512MiB": 512 << 20, "1GiB": 1 << 30, "1G": 1 << 30, "1024MB": 1024e6,
		"4096": 4096, "1.5GiB": 3 << 29, "64k": 64 << 10, "10B": 10,
	}
	for in, want := range cases {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "-1G", "1XB", "GiB", "NaN"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestFormatSize(t *testing.T) {
	cases := map[int64]string{10: "10B", 1 << 20: "1MiB", 3 << 29: "1.5GiB", 1536: "1.5KiB"}
	for in, want := range cases {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	if d, err := ParseDuration("1h30m"); err != nil || d != 90*time.Minute {
		t.Fatalf("1h30m: %v %v", d, err)
	}
	for _, bad := range []string{"-1s", "ten", ""} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestParseCountList(t *testing.T) {
	got, err := ParseCountList("1,2, 4,6-8")
	if err != nil || !reflect.DeepEqual(got, []int{1, 2, 4, 6, 7, 8}) {
		t.Fatalf("got %v %v", got, err)
	}
	for _, bad := range []string{"0", "1,,2", "a", "3-1", "-2", "1,-1"} {
		if _, err := ParseCountList(bad); err == nil {
			t.Errorf("ParseCountList(%q) accepted", bad)
		}
	}
}

// Defaults are shown as a user writes them, and read back as they were.
func TestFormatDurationAndCounts(t *testing.T) {
	for d, want := range map[time.Duration]string{2 * time.Minute: "2m", 90 * time.Minute: "1h30m", time.Hour: "1h",
		30 * time.Second: "30s", 1500 * time.Millisecond: "1.5s", 2*time.Minute + 5*time.Second: "2m5s", 0: "0s"} {
		got := FormatDuration(d)
		back, err := ParseDuration(got)
		if got != want || err != nil || back != d {
			t.Errorf("FormatDuration(%v) = %q (read back %v, %v); want %q", d, got, back, err, want)
		}
	}
	if got := FormatCountList([]int{1, 2, 4}); got != "1,2,4" {
		t.Errorf("FormatCountList = %q", got)
	}
}

// A list of rates in a sentence: thousands marked, items apart by ", " and
// the last by " and ", so that the marks and the list cannot be confused.
// ParseRateList names what is wrong with a list: an entry that is no
// number, whichever kind the entries before it were, or a mix of rates and
// fractions.
func TestParseRateListErrors(t *testing.T) {
	for list, want := range map[string]string{
		"10%,abc":   `list entry "abc" is not a rate`,
		"abc,10%":   `list entry "abc" is not a rate`,
		"20%,3000":  `list "20%,3000" mixes rates and fractions`,
		"2000,,400": `list "2000,,400" has an empty entry`,
		"5%%":       `list entry "5%%" is not a rate`,
	} {
		if _, _, err := ParseRateList(list); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseRateList(%q): %v; want %s…", list, err, want)
		}
	}
	if v, pct, err := ParseRateList("20%, 40%"); err != nil || !pct || len(v) != 2 || v[1] != 40 {
		t.Errorf("ParseRateList(20%%, 40%%) = %v, %v, %v", v, pct, err)
	}
}

func TestRateListText(t *testing.T) {
	for _, c := range []struct {
		v       []float64
		percent bool
		want    string
	}{
		{[]float64{23372}, false, "23,372"},
		{[]float64{20000, 40000}, false, "20,000 and 40,000"},
		{[]float64{20000, 40000, 1200000}, false, "20,000, 40,000 and 1,200,000"},
		{[]float64{0.5, 900}, false, "0.5 and 900"},
		{[]float64{20, 40, 60}, true, "20%, 40% and 60%"},
		{nil, false, ""},
	} {
		if got := RateListText(c.v, c.percent); got != c.want {
			t.Errorf("RateListText(%v, %v) = %q; want %q", c.v, c.percent, got, c.want)
		}
	}
}

func TestPlural(t *testing.T) {
	if got := Plural(1, "VU", "VUs") + ", " + Plural(4, "VU", "VUs") + ", " + Plural(0, "point", "points"); got != "1 VU, 4 VUs, 0 points" {
		t.Errorf("got %q", got)
	}
}
