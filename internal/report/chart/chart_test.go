package chart

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/report/reporttest"
)

// Samples, one or more per kind, shaped like what the report draws.

func lineChart() Chart {
	vus := []float64{1, 2, 4, 8, 16, 32, 64}
	tpm := []float64{9800, 19100, 37200, 61500, 70200, 68800, 64100}
	mk := func(scale float64, dashed bool, color int, name string) Series {
		s := Series{Name: name, Color: color, Dashed: dashed}
		for i, v := range vus {
			s.Points = append(s.Points, Point{X: v, Y: tpm[i] * scale})
		}
		return s
	}
	return Chart{
		Title:     "Throughput by virtual users",
		XLabel:    "virtual users",
		YLabel:    "transactions per minute",
		Kind:      Line,
		YFromZero: true,
		Series: []Series{
			mk(1, false, 0, "pg16 local NVMe TPM"),
			mk(0.43, true, 0, "pg16 local NVMe NOPM"),
			mk(0.71, false, 1, "pg16 network disk TPM"),
			mk(0.71*0.43, true, 1, "pg16 network disk NOPM"),
		},
	}
}

func timeSeriesChart(n int) Chart {
	c := Chart{
		Title:     "NOPM over time",
		XLabel:    "time (s)",
		YLabel:    "NOPM",
		Kind:      Line,
		YFromZero: true,
		Marks:     []Mark{{X: 60, Label: "8 VUs"}, {X: 120, Label: "16 VUs"}, {X: 180, Label: "32 VUs"}, {X: 181, Label: "too close"}},
	}
	for s := range 3 {
		ser := Series{Name: fmt.Sprintf("run %c", 'A'+s), Color: s}
		for i := range n {
			t := float64(i)
			step := math.Min(3, math.Floor(t/60))
			y := (20000 + 15000*step) * (1 - 0.1*float64(s)) * (1 + 0.05*math.Sin(t*0.7+float64(s)))
			ser.Points = append(ser.Points, Point{X: t, Y: y})
		}
		c.Series = append(c.Series, ser)
	}
	return c
}

func scatterChart() Chart {
	c := Chart{
		Title:  "Latency against IOPS, 8k random reads",
		XLabel: "IOPS",
		YLabel: "p99 latency (ms)",
		Kind:   Scatter,
	}
	for s, name := range []string{"local NVMe", "network disk"} {
		ser := Series{Name: name, Color: s}
		for i, qd := range []int{1, 2, 4, 8, 16, 32, 64} {
			iops := float64(qd) * 11000 / (1 + 0.15*float64(i)) / (1 + 2*float64(s))
			lat := 0.09 * math.Pow(1.5, float64(i)) * (1 + 3*float64(s))
			ser.Points = append(ser.Points, Point{X: iops, Y: lat, Label: fmt.Sprintf("qd%d", qd)})
		}
		c.Series = append(c.Series, ser)
	}
	return c
}

func logChart() Chart {
	c := Chart{
		Title:     "Sequential read bandwidth by block size",
		XLabel:    "block size (KiB)",
		YLabel:    "bandwidth (MB/s)",
		Kind:      Line,
		LogX:      true,
		YFromZero: true,
	}
	for s, name := range []string{"ext4", "xfs", "zfs"} {
		ser := Series{Name: name, Color: s}
		for i, bs := range []float64{4, 8, 16, 32, 64, 128, 256} {
			ser.Points = append(ser.Points, Point{X: bs, Y: (300 + 260*float64(i)) * (1 - 0.12*float64(s)), Label: fmt.Sprintf("%gk", bs)})
		}
		c.Series = append(c.Series, ser)
	}
	return c
}

func barChart() Chart {
	return Chart{
		Title:      "Transactions per second by type",
		XLabel:     "transaction",
		YLabel:     "transactions per second",
		Kind:       Bar,
		Categories: []string{"New-Order", "Payment", "Order-Status", "Delivery", "Stock-Level"},
		Series: []Series{
			{Name: "run A", Color: 0, Points: []Point{{X: 0, Y: 1021}, {X: 1, Y: 978}, {X: 2, Y: 91}, {X: 3, Y: 90}, {X: 4, Y: 92}}},
			{Name: "run B", Color: 1, Points: []Point{{X: 0, Y: 1530}, {X: 1, Y: 1466}, {X: 2, Y: 136}, {X: 3, Y: 133}, {X: 4, Y: 137}}},
			{Name: "run B (p99 ms)", Color: 1, Dashed: true, Points: []Point{{X: 0, Y: 420}, {X: 1, Y: 310}, {X: 2, Y: 55}, {X: 4, Y: 240}}},
		},
	}
}

var samples = []struct {
	name  string
	chart Chart
}{
	{"line", lineChart()},
	{"timeseries", timeSeriesChart(300)},
	{"scatter", scatterChart()},
	{"logx", logChart()},
	{"bar", barChart()},
}

func render(t *testing.T, c Chart) string {
	t.Helper()
	b, err := c.SVG()
	if err != nil {
		t.Fatalf("SVG: %v", err)
	}
	return string(b)
}

var colorRe = regexp.MustCompile(`(stroke|fill):(#[0-9A-Fa-f]{6})`)

// usedColors returns the colours the SVG strokes or fills with, upper-cased.
func usedColors(svg, prop string) map[string]bool {
	m := map[string]bool{}
	for _, sm := range colorRe.FindAllStringSubmatch(svg, -1) {
		if sm[1] == prop {
			m[strings.ToUpper(sm[2])] = true
		}
	}
	return m
}

func TestSVGEveryKind(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			svg := render(t, s.chart)
			if !strings.HasPrefix(svg, "<svg") {
				t.Errorf("does not start with <svg: %.80q", svg)
			}
			if !strings.HasSuffix(strings.TrimSpace(svg), "</svg>") {
				t.Errorf("does not end with </svg>")
			}
			if !regexp.MustCompile(`^<svg[^>]* viewBox="0 0 640 320"`).MatchString(svg) {
				t.Errorf("no viewBox on the root element: %.200q", svg)
			}
			for _, bad := range []string{"<?xml", "<!DOCTYPE", "<!--", "NaN", "Inf"} {
				if strings.Contains(svg, bad) {
					t.Errorf("contains %q", bad)
				}
			}
			want := []string{s.chart.Title, s.chart.XLabel, s.chart.YLabel}
			for _, ser := range s.chart.Series {
				want = append(want, ser.Name)
			}
			for _, w := range want {
				if !strings.Contains(svg, ">"+html.EscapeString(w)) {
					t.Errorf("text %q missing", w)
				}
			}
			if n := strings.Count(svg, "<path d="); n < 10 {
				t.Errorf("only %d paths", n)
			}
			prop := "stroke"
			if s.chart.Kind != Line {
				prop = "fill"
			}
			cols := usedColors(svg, prop)
			for _, i := range []int{0, 1} {
				if !cols[strings.ToUpper(Palette[i])] {
					t.Errorf("%s colour %s of series colour %d not used (have %v)", prop, Palette[i], i, cols)
				}
			}
			if !strings.Contains(svg, "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;") {
				t.Errorf("text lacks the font-family fallback list")
			}
		})
	}
}

func TestSVGNothingExternal(t *testing.T) {
	for _, s := range samples {
		svg := render(t, s.chart)
		rest := strings.Replace(svg, `xmlns="http://www.w3.org/2000/svg"`, "", 1)
		for _, bad := range []string{"http", "href", "url(", "<image", "<script", "@font-face", "@import", " id="} {
			if strings.Contains(rest, bad) {
				t.Errorf("%s: contains %q", s.name, bad)
			}
		}
	}
}

func TestSVGDeterministic(t *testing.T) {
	for _, s := range samples {
		if a, b := render(t, s.chart), render(t, s.chart); a != b {
			t.Errorf("%s: two renders differ", s.name)
		}
	}
}

func TestSVGSize(t *testing.T) {
	for _, c := range []Chart{timeSeriesChart(300), func() Chart { c := timeSeriesChart(300); c.Kind = Scatter; return c }()} {
		svg := render(t, c)
		t.Logf("%s, 3 x 300 points: %d bytes", c.Kind, len(svg))
		if len(svg) > 150_000 {
			t.Errorf("%s chart of 3 x 300 points is %d bytes", c.Kind, len(svg))
		}
	}
}

func TestEmpty(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name  string
		chart Chart
		empty bool
	}{
		{"no series", Chart{Kind: Line}, true},
		{"series without points", Chart{Series: []Series{{Name: "a"}}}, true},
		{"only NaN and Inf", Chart{Series: []Series{{Name: "a", Points: []Point{{X: nan, Y: 1}, {X: 1, Y: inf}, {X: -inf, Y: nan}}}}}, true},
		{"one finite point", Chart{Series: []Series{{Name: "a", Points: []Point{{X: nan, Y: 1}, {X: 1, Y: 2}}}}}, false},
		{"log x with x <= 0", Chart{LogX: true, Series: []Series{{Name: "a", Points: []Point{{X: 0, Y: 1}, {X: -4, Y: 2}}}}}, true},
		{"bar outside categories", Chart{Kind: Bar, Categories: []string{"a"}, Series: []Series{{Points: []Point{{X: 1, Y: 1}, {X: 0.5, Y: 1}}}}}, true},
		{"bar in category", Chart{Kind: Bar, Categories: []string{"a"}, Series: []Series{{Points: []Point{{X: 0, Y: 1}}}}}, false},
		{"marks only", Chart{Marks: []Mark{{X: 1, Label: "x"}}}, true},
	}
	for _, tc := range cases {
		if got := tc.chart.Empty(); got != tc.empty {
			t.Errorf("%s: Empty() = %v, want %v", tc.name, got, tc.empty)
		}
		_, err := tc.chart.SVG()
		if tc.empty && err == nil {
			t.Errorf("%s: SVG of an empty chart did not fail", tc.name)
		}
		if !tc.empty && err != nil {
			t.Errorf("%s: SVG: %v", tc.name, err)
		}
	}
}

func TestNaNPointsSkipped(t *testing.T) {
	clean := lineChart()
	dirty := lineChart()
	dirty.Series = nil
	for _, s := range clean.Series {
		d := s
		d.Points = append([]Point{{X: math.NaN(), Y: 5}}, s.Points...)
		d.Points = append(d.Points, Point{X: 100, Y: math.Inf(1)}, Point{X: math.Inf(-1), Y: math.NaN()})
		dirty.Series = append(dirty.Series, d)
	}
	if a, b := render(t, clean), render(t, dirty); a != b {
		t.Errorf("NaN/Inf points at the ends changed the output")
	}

	// In the middle a bad point breaks the line rather than failing or bridging it.
	gap := lineChart()
	gap.Series[0].Points[3].Y = math.NaN()
	svg := render(t, gap)
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Errorf("NaN leaked into the SVG")
	}
}

func TestBarCategories(t *testing.T) {
	c := barChart()
	svg := render(t, c)
	for _, cat := range c.Categories {
		if !strings.Contains(svg, ">"+cat+"</text>") {
			t.Errorf("category %q missing", cat)
		}
	}
	// Values on the bars: 15 bars fit.
	for _, v := range []string{"1.02k", "1.53k", "91", "420"} {
		if !strings.Contains(svg, ">"+v+"</text>") {
			t.Errorf("bar value %q missing", v)
		}
	}

	// Without names the categories are numbered.
	c.Categories = nil
	svg = render(t, c)
	if !strings.Contains(svg, ">4</text>") {
		t.Errorf("numbered category missing")
	}
}

func TestMarks(t *testing.T) {
	svg := render(t, timeSeriesChart(240))
	for _, l := range []string{"8 VUs", "16 VUs", "32 VUs"} {
		if !strings.Contains(svg, ">"+l+"</text>") {
			t.Errorf("mark label %q missing", l)
		}
	}
	// 181 s is one second after the 180 s mark: its line is drawn, its label would overprint, so it is left out.
	if strings.Contains(svg, "too close") {
		t.Errorf("colliding mark label drawn")
	}
}

func TestLegendNoData(t *testing.T) {
	c := lineChart()
	c.Series = append(c.Series, Series{Name: "run C", Color: 2, Points: []Point{{X: math.NaN(), Y: 1}}})
	if svg := render(t, c); !strings.Contains(svg, ">run C (no data)</text>") {
		t.Errorf("series without data not marked in the legend")
	}
}

func TestManyLegendEntries(t *testing.T) {
	c := Chart{Title: "many", XLabel: "x (s)", YLabel: "y (ms)", Kind: Line}
	for i := range 10 {
		c.Series = append(c.Series, Series{Name: fmt.Sprintf("a rather long run name %d", i), Color: i,
			Points: []Point{{X: 0, Y: float64(i)}, {X: 1, Y: float64(i + 1)}}})
	}
	svg := render(t, c)
	for _, s := range c.Series {
		if !strings.Contains(svg, ">"+s.Name+"</text>") {
			t.Errorf("legend entry %q missing", s.Name)
		}
	}
}

func TestFormatTicks(t *testing.T) {
	cases := []struct {
		in   []float64
		want string
	}{
		{[]float64{0, 20000, 40000, 60000}, "0 20k 40k 60k"},
		{[]float64{0, 500, 1000, 1500}, "0 500 1k 1.5k"},
		{[]float64{0, 0.5, 1, 1.5}, "0.0 0.5 1.0 1.5"},
		{[]float64{0, 1e6, 2e6, 2.5e6}, "0 1M 2M 2.5M"},
		{[]float64{4096, 8192, 262144}, "4,096 8,192 262,144"},
		{[]float64{4, 8, 16, 256}, "4 8 16 256"},
		{[]float64{-1000, 0, 1000}, "-1k 0 1k"},
		{[]float64{0.001, 0.002}, "0.001 0.002"},
	}
	for _, tc := range cases {
		if got := strings.Join(formatTicks(tc.in), " "); got != tc.want {
			t.Errorf("formatTicks(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	cases := map[float64]string{0: "0", 61234: "61.2k", 950: "950", 12.345: "12.3", 0.5123: "0.512", 1234567: "1.23M", -2500: "-2.5k"}
	for in, want := range cases {
		if got := formatValue(in); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	got := fmt.Sprint(logTicks(4, 256, []float64{4, 8, 16, 32, 64, 128, 256}))
	if got != "[4 8 16 32 64 128 256]" {
		t.Errorf("power-of-two data: ticks %s", got)
	}
	got = fmt.Sprint(logTicks(3, 900, []float64{3, 17, 900, 41}))
	if got != "[5 10 20 50 100 200 500]" {
		t.Errorf("irregular data: ticks %s", got)
	}
}

// TestWriteSamples writes every sample as SVG and all of them in one HTML page, for eyeballing; with
// TIERBENCH_ARTIFACTS set, they are copied there.
func TestWriteSamples(t *testing.T) {
	dir := t.TempDir()
	var page bytes.Buffer
	page.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>chart samples</title>" +
		"<style>body{margin:0 auto;max-width:900px;font-family:sans-serif}figure{margin:0 0 24px}</style></head><body>\n")
	files := map[string][]byte{}
	for _, s := range samples {
		b, err := s.chart.SVG()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		files[s.name+".svg"] = b
		fmt.Fprintf(&page, "<figure>%s</figure>\n", b)
		t.Logf("%s: %d bytes", s.name, len(b))
	}
	page.WriteString("</body></html>\n")
	files["samples.html"] = page.Bytes()

	out := os.Getenv("TIERBENCH_ARTIFACTS")
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range files {
		for _, d := range []string{dir, out} {
			if d == "" {
				continue
			}
			if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The report may render its charts in parallel.
func TestSVGConcurrent(t *testing.T) {
	want := make([]string, len(samples))
	for i, s := range samples {
		want[i] = render(t, s.chart)
	}
	errs := make(chan error, 4*len(samples))
	for range 4 {
		for i, s := range samples {
			go func() {
				b, err := s.chart.SVG()
				if err == nil && string(b) != want[i] {
					err = fmt.Errorf("%s: concurrent render differs", s.name)
				}
				errs <- err
			}()
		}
	}
	for range 4 * len(samples) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// Counts on the x axis (virtual users) get whole-number ticks only.
func TestXIntegerTicks(t *testing.T) {
	c := Chart{Title: "t", XLabel: "virtual users", YLabel: "TPM", Kind: Line, XInteger: true,
		Series: []Series{{Name: "TPM", Points: []Point{{X: 1, Y: 10}, {X: 2, Y: 20}}}}}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, frac := range []string{">1.2<", ">1.5<", ">1.0<"} {
		if strings.Contains(string(svg), frac) {
			t.Errorf("XInteger chart has a tick label %s", frac)
		}
	}
	c.XInteger = false
	svg, _ = c.SVG()
	if !strings.Contains(string(svg), ">1.2<") && !strings.Contains(string(svg), ">1.5<") {
		t.Errorf("without XInteger, a 1..2 axis has no fractional tick; the test above proves nothing")
	}
}

// 12,000 seconds into 600 columns: each column holds its 20 seconds, with
// their lowest, highest and mean values, and a spike of one second survives
// as its column's highest.
func TestEnvelopeBuckets(t *testing.T) {
	const n, cols, spikeAt = 12000, 600, 7777
	pts := make([]Point, n)
	for i := range pts {
		// Mid-second times: no point sits on a column's edge.
		pts[i] = Point{X: float64(i) + 0.5, Y: 1000 + 100*math.Sin(float64(i)*0.37)}
	}
	pts[spikeAt].Y = 50000
	bs := envelope(pts, cols, func(x float64) float64 { return x / n })
	if len(bs) != cols {
		t.Fatalf("%d buckets; want %d", len(bs), cols)
	}
	for i, b := range bs {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, p := range pts[20*i : 20*(i+1)] {
			lo, hi, sum = math.Min(lo, p.Y), math.Max(hi, p.Y), sum+p.Y
		}
		if b.N != 20 || b.Min != lo || b.Max != hi || math.Abs(b.Mean-sum/20) > 1e-9 || b.X != float64(20*i)+10 {
			t.Errorf("bucket %d = %+v; want 20 points at x %g, min %g, max %g, mean %g", i, b, float64(20*i)+10, lo, hi, sum/20)
		}
	}
	if b := bs[spikeAt/20]; b.Max != 50000 || b.Mean < 2000 {
		t.Errorf("the spike's bucket %+v; want max 50000 and a mean raised by it", b)
	}
}

// Empty columns are left out; points beyond the axis go to its end columns.
func TestEnvelopeEdges(t *testing.T) {
	pts := []Point{{X: -5, Y: 1}, {X: 0.1, Y: 3}, {X: 0.95, Y: 2}, {X: 7, Y: 4}}
	got := envelope(pts, 4, func(x float64) float64 { return x })
	want := []bucket{{X: -2.45, Min: 1, Max: 3, Mean: 2, N: 2}, {X: 3.975, Min: 2, Max: 4, Mean: 3, N: 2}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("envelope = %+v; want %+v", got, want)
	}
}

// A series longer than the plot is wide is drawn as a band and a mean line
// with a point per column, however long it is; one no longer than that is
// drawn point by point, as before.
func TestEnvelopeSVG(t *testing.T) {
	long := timeSeriesChart(12000)
	long.Series[0].Points[7777].Y = 200000
	if !long.Enveloped() {
		t.Fatal("a chart of 3 x 12,000 points is not enveloped")
	}
	cols := long.columns()
	svg := render(t, long)
	t.Logf("3 x 12,000 points in %d columns: %d bytes", cols, len(svg))
	for i, n := range reporttest.PathPoints([]byte(svg)) {
		if n > 2*cols+4 {
			t.Errorf("path %d has %d points; want at most two per column (%d)", i, n, 2*cols+4)
		}
	}
	if n := strings.Count(svg, "fill-opacity:"); n != 3+3 { // a band per series, in the plot and in the legend
		t.Errorf("%d translucent fills; want a band per series in the plot and the legend (6)", n)
	}
	if !strings.Contains(svg, ">200k</text>") {
		t.Error("the y axis does not reach the one-second spike of 200k")
	}
	if len(svg) > 150_000 {
		t.Errorf("the chart is %d bytes", len(svg))
	}

	// At the boundary: as many points as columns draw as before.
	cols = timeSeriesChart(1000).columns()
	if c := timeSeriesChart(cols); c.Enveloped() || strings.Contains(render(t, c), "fill-opacity") {
		t.Errorf("a series of %d points on %d columns is drawn as an envelope", cols, cols)
	}
	if c := timeSeriesChart(cols + 1); !c.Enveloped() {
		t.Errorf("a series of %d points on %d columns is not drawn as an envelope", cols+1, cols)
	}
	for _, s := range samples {
		if s.chart.Enveloped() {
			t.Errorf("%s: a short chart is enveloped", s.name)
		}
	}
}

// TestErrorBars: a point's interval is drawn as a bar with two caps (three
// strokes), in its series' colour, and widens the y axis to hold it; a
// point without one draws nothing more.
func TestErrorBars(t *testing.T) {
	c := Chart{Title: "NOPM by VUs", XLabel: "virtual users", YLabel: "NOPM", Kind: Line, XInteger: true,
		Series: []Series{{Name: "NOPM", Points: []Point{{X: 1, Y: 10}, {X: 2, Y: 20}, {X: 4, Y: 30}}}}}
	plain := render(t, c)
	c.Series[0].Points[0].Low, c.Series[0].Points[0].High = 8, 12
	c.Series[0].Points[2].Low, c.Series[0].Points[2].High = 25, 61
	c.Series[0].Points[1].Low, c.Series[0].Points[1].High = 20, 20 // no width: no bar
	bars := render(t, c)
	if n := strings.Count(bars, "<path") - strings.Count(plain, "<path"); n != 6 {
		t.Errorf("two error bars drew %d more paths; want 6 (a bar and two caps each)", n)
	}
	if !strings.Contains(bars, ">60<") || strings.Contains(plain, ">60<") {
		t.Errorf("the y axis does not reach the interval's top (61): no tick at 60")
	}
}

// TestBarErrorBars: a bar's interval is drawn at its centre (three
// strokes), and the y axis reaches its top.
func TestBarErrorBars(t *testing.T) {
	c := Chart{Title: "IOPS per point", XLabel: "point", YLabel: "IOPS", Kind: Bar, Categories: []string{"a", "b"},
		Series: []Series{{Name: "IOPS", Points: []Point{{X: 0, Y: 100}, {X: 1, Y: 200}}}}}
	plain := render(t, c)
	c.Series[0].Points[1].Low, c.Series[0].Points[1].High = 180, 199 // inside the axis as it is
	bars := render(t, c)
	if n := strings.Count(bars, "<path") - strings.Count(plain, "<path"); n != 3 {
		t.Errorf("one error bar drew %d more paths; want 3", n)
	}
	c.Series[0].Points[1].High = 410
	if tall := render(t, c); !strings.Contains(tall, ">400<") || strings.Contains(plain, ">400<") {
		t.Error("the y axis does not reach the interval's top (410)")
	}
}
