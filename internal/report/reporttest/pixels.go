package reporttest

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
)

// A chart counts as drawn when at least minInkShare of its pixels differ from
// its background and they use at least minInkColours distinct colours: one
// colour alone is a filled box or a border, not a chart.
const (
	minInkShare   = 0.01
	minInkColours = 2
)

// blank says why the PNG screenshot of a chart looks blank, or returns "" when
// something is drawn in it. The background is the most common colour.
func blank(pngData []byte) string {
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return "screenshot is not a PNG: " + err.Error()
	}
	b := img.Bounds()
	total := b.Dx() * b.Dy()
	if total == 0 {
		return "screenshot is empty"
	}
	counts := make(map[color.NRGBA]int)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)]++
		}
	}
	var background color.NRGBA
	most := 0
	for c, n := range counts {
		if n > most {
			background, most = c, n
		}
	}
	ink := total - most
	share := float64(ink) / float64(total)
	switch {
	case share < minInkShare:
		return fmt.Sprintf("%.2f%% of its %dx%d pixels differ from the background %s, want >= %.0f%%",
			100*share, b.Dx(), b.Dy(), hex(background), 100*minInkShare)
	case len(counts)-1 < minInkColours:
		return fmt.Sprintf("only %d colour besides the background %s, want >= %d", len(counts)-1, hex(background), minInkColours)
	}
	return ""
}

func hex(c color.NRGBA) string {
	return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
}
