package units

import (
	"strconv"
	"strings"
	"testing"
)

// checkMessage fails unless err reads as one line of a `tierbench: ` error.
func checkMessage(t *testing.T, in string, err error) {
	t.Helper()
	msg := err.Error()
	if msg == "" || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("input %q: error %q is empty or not one line", in, msg)
	}
}

// FuzzParseSize: an accepted size is 0..2^62 bytes; its decimal form parses
// to exactly the same size; FormatSize's rounded form parses back to within
// 5%; the suffix's case does not matter.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512MiB", "1GiB", "1G", "1024MB", "4096", "1.5GiB", "64k", "10B", " 2 TiB ",
		"0", "0B", "1e3", "9007199254740993", "4611686018427387904", "4611686018427387905", "4EiB", "1XB", "12XB",
		"", "B", "-1G", "-0", "+5", "NaN", "inf", "Infinity", "0x1p4", "1_000", "1e400", "1e-400", ".5K", "5.",
		"1.2.3M", "MiB", "1 k", "\x00", "٣MiB", "1GiB\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			checkMessage(t, s, err)
			return
		}
		if n < 0 || n > maxSize {
			t.Fatalf("ParseSize(%q) = %d, outside 0..2^62", s, n)
		}
		if m, err := ParseSize(strconv.FormatInt(n, 10)); err != nil || m != n {
			t.Fatalf("ParseSize(%q) = %d, but its decimal form parses as %d, %v", s, n, m, err)
		}
		back, err := ParseSize(FormatSize(n))
		if err != nil {
			t.Fatalf("FormatSize(%d) = %q does not parse: %v", n, FormatSize(n), err)
		}
		if diff := float64(back - n); diff > 0.05*float64(n) || -diff > 0.05*float64(n) {
			t.Fatalf("FormatSize(%d) = %q parses as %d, more than 5%% off", n, FormatSize(n), back)
		}
		for _, c := range []string{strings.ToLower(s), strings.ToUpper(s)} {
			if m, err := ParseSize(c); err != nil || m != n {
				t.Fatalf("ParseSize(%q) = %d but ParseSize(%q) = %d, %v", s, n, c, m, err)
			}
		}
	})
}

// FuzzParseDuration: an accepted duration is not negative and its String
// form parses back to the same duration.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30s", "2m", "1h30m", "0", "0s", "1.5s", "100ms", " 5s ", "-1s", "-0s", "ten", "",
		"1d", "9223372036854775807ns", "9223372036854775808ns", "2562047h47m16.854775807s", "1e3s", "+3s", ".5m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			checkMessage(t, s, err)
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, negative", s, d)
		}
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, whose String form parses as %v, %v", s, d, back, err)
		}
	})
}

// FuzzParseCountList: an accepted list is non-empty, every count is 1 or
// more, it holds at most maxCountList counts, and written out with commas it
// parses back to the same list.
func FuzzParseCountList(f *testing.F) {
	for _, s := range []string{"1", "1,2,4", "1,2,3,5,8,13,21,34,55,89", "1-4", "1-3,5", " 1 , 2 ", "1 - 3",
		"0", "-1", "1,,2", ",", "", "3-1", "1--3", "1-", "-", "+2", "1-100000", "1-100001", "1-99999999",
		"1-60000,1-60000", "9223372036854775807", "1-9223372036854775807", "a", "1,-1", "1.5", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		xs, err := ParseCountList(s)
		if err != nil {
			checkMessage(t, s, err)
			return
		}
		if len(xs) == 0 || len(xs) > maxCountList {
			t.Fatalf("ParseCountList(%q) gave %d counts", s, len(xs))
		}
		parts := make([]string, len(xs))
		for i, x := range xs {
			if x < 1 {
				t.Fatalf("ParseCountList(%q) gave count %d", s, x)
			}
			parts[i] = strconv.Itoa(x)
		}
		back, err := ParseCountList(strings.Join(parts, ","))
		if err != nil || len(back) != len(xs) {
			t.Fatalf("ParseCountList(%q) = %v does not round-trip: %v, %v", s, xs, back, err)
		}
		for i := range xs {
			if back[i] != xs[i] {
				t.Fatalf("ParseCountList(%q) = %v does not round-trip: %v", s, xs, back)
			}
		}
	})
}
