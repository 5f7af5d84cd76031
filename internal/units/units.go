// Package units parses and formats the values users type: sizes (512MiB, 1G,
// 1024MB), durations (Go's form) and lists of counts (1,2,4).
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

var sizeSuffixes = []struct {
	suffix string
	mult   int64
}{
	// Longest suffixes first so "MiB" is not read as "B".
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000},
	// A bare K/M/G/T is binary, as fio, PostgreSQL and most tools read it.
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads a byte size such as 512MiB, 1GiB, 1G, 1024MB or 4096.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size; give a size such as 512MiB, 1GiB, 1G or 1024MB")
	}
	up := strings.ToUpper(t)
	mult := int64(1)
	num := up
	for _, sf := range sizeSuffixes {
		if strings.HasSuffix(up, sf.suffix) {
			mult = sf.mult
			num = strings.TrimSpace(up[:len(up)-len(sf.suffix)])
			break
		}
	}
	// Plain decimals only: ParseFloat alone would also take "inf", "nan",
	// hex floats (0x1p4) and underscores.
	if num == "" || strings.Trim(num, "0123456789.E+-") != "" {
		return 0, fmt.Errorf("size %q is not understood; give a size such as 512MiB, 1GiB, 1G or 1024MB", s)
	}
	// A whole number is exact; float64 would round one above 2^53.
	if n, err := strconv.ParseInt(num, 10, 64); err == nil && n >= 0 {
		if n > maxSize/mult {
			return 0, fmt.Errorf("size %q is too large; give at most 4194304TiB", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || f < 0 || f != f {
		return 0, fmt.Errorf("size %q is not understood; give a size such as 512MiB, 1GiB, 1G or 1024MB", s)
	}
	v := f * float64(mult)
	if v > maxSize {
		return 0, fmt.Errorf("size %q is too large; give at most 4194304TiB", s)
	}
	return int64(v), nil
}

// maxSize is the largest size ParseSize returns (4 EiB), far above any disk
// and far enough below 2^63 that sums of a few sizes cannot overflow.
const maxSize = 1 << 62

// FormatSize prints n bytes with a binary suffix, e.g. 1.5GiB.
func FormatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + []string{"KiB", "MiB", "GiB", "TiB"}[exp]
}

// ParseDuration reads Go's duration form (30s, 2m, 1h30m) and refuses
// negative values.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("duration %q is not understood; give a duration such as 30s, 2m or 1h30m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative; give a duration of 0s or more", s)
	}
	return d, nil
}

// maxCountList bounds a list's length, ranges expanded: far more steps or
// points than any run has, and little enough memory that a typo such as
// 1-99999999 is an error rather than a stall.
const maxCountList = 100000

// ParseCountList reads a comma-separated list of positive counts such as
// "1,2,4" or "1-3,5" (a range a-b expands to every count from a to b).
func ParseCountList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("list %q has an empty entry; give counts such as 1,2,4", s)
		}
		lo, hi := part, part
		if i := strings.IndexByte(part, '-'); i > 0 {
			lo, hi = part[:i], part[i+1:]
		}
		a, errA := strconv.Atoi(strings.TrimSpace(lo))
		b, errB := strconv.Atoi(strings.TrimSpace(hi))
		if errA != nil || errB != nil {
			return nil, fmt.Errorf("list entry %q is not a count; give counts such as 1,2,4", part)
		}
		if a < 1 || b < 1 {
			return nil, fmt.Errorf("list entry %q must be 1 or more", part)
		}
		if b < a {
			return nil, fmt.Errorf("range %q runs backwards; write it low-high", part)
		}
		if b-a >= maxCountList || len(out)+b-a >= maxCountList {
			return nil, fmt.Errorf("list %q has more than %d entries", s, maxCountList)
		}
		for i := range b - a + 1 { // v <= b would never end for b = MaxInt
			out = append(out, a+i)
		}
	}
	return out, nil
}

// ParseRateList reads a comma-separated list of rates such as
// "20000,40000" (transactions a minute; "_" may group digits: 20_000), or
// of percentages such as "20%,40%,100%" (fractions of a maximum, which the
// run measures first): percent says which. A list holds one kind only. It
// checks the syntax only: whether a rate is in range is the run's rule.
func ParseRateList(s string) (v []float64, percent bool, err error) {
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, false, fmt.Errorf("list %q has an empty entry; give rates such as 20000,40000 or fractions of the maximum such as 20%%,60%%,100%%", s)
		}
		num, isPct := strings.CutSuffix(part, "%")
		// An entry that is no number is named as such, before the list's
		// kinds are compared: "10%,abc" mixes nothing.
		x, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(num), "_", ""), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false, fmt.Errorf("list entry %q is not a rate; give rates such as 20000,40000 or fractions of the maximum such as 20%%,60%%", part)
		}
		if i == 0 {
			percent = isPct
		} else if isPct != percent {
			return nil, false, fmt.Errorf("list %q mixes rates and fractions; give rates (20000,40000) or percentages of the maximum (20%%,40%%), not both", s)
		}
		if len(v) >= maxCountList {
			return nil, false, fmt.Errorf("list %q has more than %d entries", s, maxCountList)
		}
		v = append(v, x)
	}
	return v, percent, nil
}

// FormatRateList is ParseRateList's inverse: "20000,40000", or with
// percent "20%,40%".
func FormatRateList(v []float64, percent bool) string {
	parts := make([]string, len(v))
	for i, r := range v {
		parts[i] = strconv.FormatFloat(r, 'f', -1, 64)
		if percent {
			parts[i] += "%"
		}
	}
	return strings.Join(parts, ",")
}

// RateListText is a list of rates as a sentence gives it, whole ones with
// thousands marked: "23,372", "20,000 and 40,000", "20,000, 40,000 and
// 60,000", or with percent "20% and 40%". FormatRateList gives it as the
// flag takes it.
func RateListText(v []float64, percent bool) string {
	parts := make([]string, len(v))
	for i, r := range v {
		if r == math.Trunc(r) && math.Abs(r) < 1e18 {
			parts[i] = Thousands(int64(r))
		} else {
			parts[i] = strconv.FormatFloat(r, 'f', -1, 64)
		}
		if percent {
			parts[i] += "%"
		}
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Plural is n with the noun that fits it: "1 VU", "4 VUs".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Thousands formats n with commas: 1234567 -> 1,234,567.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FormatDuration writes a duration as a user would, in the form
// ParseDuration reads: 2m rather than Go's 2m0s, 1h30m rather than 1h30m0s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// FormatCountList writes counts as ParseCountList reads them: 1,2,4.
func FormatCountList(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
