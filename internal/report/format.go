package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/units"
)

// unknown is what a missing fact shows as.
const unknown = "unknown"

// num formats a quantity with sensible precision: thousands separated
// integers from 100 up, one decimal from 10, two below, three below 0.1.
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case math.Abs(v) >= 100:
		return thousands(int64(math.Round(v)))
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v == 0:
		return "0"
	case math.Abs(v) >= 0.1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// thousands formats n with commas: 1234567 -> 1,234,567.
func thousands(n int64) string { return units.Thousands(n) }

// pct formats a percentage with one decimal.
func pct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " %"
}

// ratio formats b/a as "2.30x" ("–" when undefined).
func ratio(a, b float64) string {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "–"
	}
	return strconv.FormatFloat(b/a, 'f', 2, 64) + "x"
}

// bytesText formats a byte count in binary units, or unknown for 0.
func bytesText(n int64) string {
	if n <= 0 {
		return unknown
	}
	return units.FormatSize(n)
}

// orUnknown returns s, or unknown when it is empty.
func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return unknown
	}
	return s
}

// intOrUnknown formats a count, or unknown for 0.
func intOrUnknown(n int) string {
	if n <= 0 {
		return unknown
	}
	return strconv.Itoa(n)
}

// trimFloat prints a float without trailing zeros.
func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// get returns m[k], NaN when absent.
func nan() float64 { return math.NaN() }

func get(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

// slug makes an id usable in anchors and file names.
func slug(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('-')
		}
		for _, c := range strings.ToLower(p) {
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				b.WriteRune(c)
			default:
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

// plural is units.Plural: "1 VU", "4 VUs".
func plural(n int, one, many string) string { return units.Plural(n, one, many) }
