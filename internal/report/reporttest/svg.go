package reporttest

import "regexp"

// pathData matches the outline of each path element of an SVG or a page.
var pathData = regexp.MustCompile(`<path[^>]* d="([^"]*)"`)

// PathPoints returns the number of points of each SVG path in doc, an SVG or
// a whole page, in document order: how much a chart draws, which must not
// grow with the length of the series behind it.
func PathPoints(doc []byte) []int {
	var out []int
	for _, m := range pathData.FindAllSubmatch(doc, -1) {
		n := 0
		for _, c := range m[1] {
			switch c {
			case 'M', 'L', 'Q', 'C', 'A':
				n++
			}
		}
		out = append(out, n)
	}
	return out
}
