package reporttest

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// goodChart draws axes and a coloured series, like a report chart.
const goodChart = `<figure class="chart" id="%s"><svg viewBox="0 0 400 200" width="400" height="200">
<line x1="40" y1="180" x2="390" y2="180" stroke="#444" stroke-width="2"/>
<line x1="40" y1="10" x2="40" y2="180" stroke="#444" stroke-width="2"/>
<rect x="60" y="80" width="60" height="100" fill="#1f77b4"/>
<rect x="150" y="40" width="60" height="140" fill="#ff7f0e"/>
<polyline points="60,150 150,60 240,120 330,30" fill="none" stroke="#2ca02c" stroke-width="3"/>
</svg><figcaption>%s</figcaption></figure>`

func htmlPage(body string) string {
	return `<!doctype html><html><head><meta charset="utf-8"><title>t</title>
<style>body{font-family:sans-serif;background:#fff}</style></head><body>` + body + `</body></html>`
}

func chartFig(id string) string { return fmt.Sprintf(goodChart, id, "caption "+id) }

func writePage(t *testing.T, html string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(p, []byte(htmlPage(html)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder is a testing.TB that records failures instead of failing the test.
// Fatal and Skip end the calling goroutine, as testing does, so the check must
// run in a goroutine of its own (see check).
type recorder struct {
	testing.TB
	mu      sync.Mutex
	errs    []string
	failed  bool
	fatal   bool
	skipped string
}

func (r *recorder) Helper() {}

func (r *recorder) add(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, msg)
	r.failed = true
}

func (r *recorder) Error(args ...any)                 { r.add(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.add(fmt.Sprintf(format, args...)) }
func (r *recorder) Fail()                             { r.add("Fail") }
func (r *recorder) Failed() bool                      { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }
func (r *recorder) FailNow()                          { r.Fatal("FailNow") }
func (r *recorder) Fatal(args ...any) {
	r.add(fmt.Sprint(args...))
	r.mu.Lock()
	r.fatal = true
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }
func (r *recorder) Skip(args ...any) {
	r.mu.Lock()
	r.skipped = fmt.Sprint(args...)
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Skipf(format string, args ...any) { r.Skip(fmt.Sprintf(format, args...)) }
func (r *recorder) SkipNow()                         { r.Skip("SkipNow") }
func (r *recorder) Skipped() bool                    { r.mu.Lock(); defer r.mu.Unlock(); return r.skipped != "" }

// check runs CheckInBrowserOpened against a recorder and returns it when
// done, with what the browser saw.
func check(t *testing.T, htmlPath string, minCharts int, screenshot string) (*recorder, Opened) {
	t.Helper()
	r := &recorder{TB: t}
	var opened Opened
	done := make(chan struct{})
	go func() {
		defer close(done)
		opened = CheckInBrowserOpened(r, htmlPath, minCharts, screenshot)
	}()
	<-done
	return r, opened
}

func requireBrowser(t *testing.T) {
	t.Helper()
	if findBrowser() == "" {
		testenv.SkipOrFail(t, "%s", "no Chromium on PATH; "+installHint)
	}
}

func TestGoodPagePasses(t *testing.T) {
	requireBrowser(t)
	t.Parallel()
	// The spacer puts the second chart below the 800px window, so the check
	// must scroll to it and the full-page screenshot must reach past the window.
	html := writePage(t, `<section id="one">`+chartFig("first")+`</section><div style="height:1500px"></div><section id="two">`+
		chartFig("second")+`</section>`)
	shot := filepath.Join(t.TempDir(), "shots", "good.png")

	r, opened := check(t, html, 2, shot)
	if r.Failed() || r.Skipped() {
		t.Fatalf("good page: failed=%v skipped=%q errors:\n%s", r.Failed(), r.skipped, strings.Join(r.errs, "\n"))
	}
	if opened.Load <= 0 || strings.Join(opened.Sections, ",") != "one,two" {
		t.Errorf("opened %+v; want a load time and the sections one, two", opened)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if h := img.Bounds().Dy(); h <= 1500 {
		t.Errorf("full-page screenshot is %dpx high, want the whole page (> 1500px)", h)
	}
}

func TestFailuresDetected(t *testing.T) {
	requireBrowser(t)
	two := chartFig("a") + chartFig("b")
	cases := []struct {
		name      string
		body      string
		minCharts int
		want      string // in one of the recorded errors
	}{
		{"console error", two + `<script>console.error("x")</script>`, 2, "console.error: x"},
		{"uncaught exception", two + `<script>throw new Error("boom")</script>`, 2, "uncaught exception: Uncaught Error: boom"},
		{"network request", two + `<img src="http://example.invalid/x.png">`, 2, "requests http://example.invalid/x.png"},
		{"blank chart", chartFig("a") + `<figure class="chart" id="empty"><svg viewBox="0 0 400 200" width="400" height="200"></svg></figure>`, 2, "chart 2 (empty) is blank"},
		{"zero-size chart", chartFig("a") + `<figure class="chart" id="flat"><svg width="400" height="0"><rect width="10" height="10"/></svg></figure>`, 2, "chart 2 (flat) has zero size"},
		{"figure without svg", two + `<figure class="chart" id="nosvg"><p>no chart</p></figure>`, 2, "figure.chart chart 3 (nosvg) has no svg"},
		{"too few charts", chartFig("a"), 2, `found 1 "figure.chart svg" elements, want at least 2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, _ := check(t, writePage(t, c.body), c.minCharts, "")
			if r.fatal || r.Skipped() {
				t.Fatalf("check stopped early: fatal=%v skipped=%q errors:\n%s", r.fatal, r.skipped, strings.Join(r.errs, "\n"))
			}
			t.Logf("recorded:\n%s", strings.Join(r.errs, "\n"))
			for _, e := range r.errs {
				if strings.Contains(e, c.want) {
					return
				}
			}
			t.Errorf("no error contains %q; got:\n%s", c.want, strings.Join(r.errs, "\n"))
		})
	}
}

func TestNoBrowser(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	html := writePage(t, chartFig("a"))

	t.Setenv("CI", "")
	if r, _ := check(t, html, 1, ""); !r.Skipped() || r.Failed() || !strings.Contains(r.skipped, "apt-get install chromium") {
		t.Errorf("without CI: skipped=%q failed=%v, want a skip naming the install command", r.skipped, r.Failed())
	}
	t.Setenv("CI", "true")
	if r, _ := check(t, html, 1, ""); !r.fatal || r.Skipped() {
		t.Errorf("with CI=true: fatal=%v skipped=%q, want a fatal failure", r.fatal, r.skipped)
	}
}

func TestArtifactDir(t *testing.T) {
	want := filepath.Join(t.TempDir(), "arts")
	t.Setenv("TIERBENCH_ARTIFACTS", want)
	if got := ArtifactDir(t); got != want {
		t.Errorf("with TIERBENCH_ARTIFACTS: got %s, want %s", got, want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("not created: %v", err)
	}

	t.Setenv("TIERBENCH_ARTIFACTS", "")
	got := ArtifactDir(t)
	if filepath.Base(got) != "test-artifacts" {
		t.Errorf("default: got %s, want <repo root>/test-artifacts", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(got), "go.mod")); err != nil {
		t.Errorf("default %s is not beside go.mod: %v", got, err)
	}
}
