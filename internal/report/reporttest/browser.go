// Package reporttest checks an HTML report the way a reader sees it: in a real,
// headless Chromium, from disk, with no network.
package reporttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/tierbench/tierbench/internal/testenv"
)

// chartSelector picks the charts; an svg nested in another svg is part of its
// outer chart, not a chart of its own.
const chartSelector = "figure.chart svg"

// checkTimeout bounds one whole check, browser start to browser exit: a
// guard against a browser that hangs, not a measure of speed. The long
// run's report (80 charts, each screenshotted) took over 60 s on a 2-core
// machine whose hypervisor stole up to half its CPU.
const checkTimeout = 180 * time.Second

// browserNames are tried in this order on PATH.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome"}

const installHint = "install it with `apt-get install chromium`, or run `make test`, which installs it"

// CheckInBrowser opens the HTML file at htmlPath from disk (file:// URL) in
// headless Chromium and fails t when the page logs a console error, throws an
// uncaught exception or fails to load a resource; when it requests anything
// that is not file:// or data: (the report must work offline); when a
// figure.chart has no svg, a chart svg has zero width or height, or there are
// fewer than minCharts of them; or when a chart is blank (fewer than 1% of its
// pixels, or fewer than 2 distinct colours, differ from its background).
// Every problem is reported, not just the first.
//
// It saves a full-page PNG screenshot to screenshotPath, creating its
// directory, unless screenshotPath is "".
//
// Without Chromium it skips t, or fails it when the environment has CI=true.
func CheckInBrowser(t testing.TB, htmlPath string, minCharts int, screenshotPath string) {
	t.Helper()
	CheckInBrowserOpened(t, htmlPath, minCharts, screenshotPath)
}

// Opened is what the browser saw of a page it opened.
type Opened struct {
	// Load is the time from the start of the navigation until the page had
	// loaded, its fonts were ready and it had drawn two frames, by the
	// page's own clock (performance.now()): how long a reader waits for it,
	// without the browser's start.
	Load time.Duration
	// Sections are the ids of the page's section elements, in document
	// order.
	Sections []string
}

// CheckInBrowserOpened is CheckInBrowser, returning what the browser saw
// of the page as it opened it.
func CheckInBrowserOpened(t testing.TB, htmlPath string, minCharts int, screenshotPath string) Opened {
	t.Helper()
	bin := findBrowser()
	if bin == "" {
		testenv.SkipOrFail(t, "no Chromium on PATH (looked for %s); %s", strings.Join(browserNames, ", "), installHint)
	}

	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		t.Fatalf("report path %s: %v", htmlPath, err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("report: %v", err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()

	ctx, cancel := context.WithTimeout(t.Context(), checkTimeout)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // root in a container or VM has no usable sandbox
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		// Without /dev/shm Chromium keeps its shared memory in
		// org.chromium.Chromium.* directories under TMPDIR, and leaves
		// them: in the test's own temporary directory, they go with it.
		chromedp.Env("TMPDIR="+t.TempDir()),
		chromedp.WindowSize(1000, 800),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	// Cancelling waits for the browser process to exit.
	defer cancelBrowser()

	var ev events
	// Listen starts the browser; it must come before the navigation so that
	// nothing the page does while loading is missed.
	if err := chromedp.Listen(bctx, ev.record); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("loading %s: %v", pageURL, err)
	}
	// Charts drawn from requestAnimationFrame appear by the second frame.
	seen, err := chromedp.Run(bctx, chromedp.Evaluate[struct {
		LoadMs   float64  `json:"loadMs"`
		Sections []string `json:"sections"`
	}](`document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r({
	loadMs: performance.now(),
	sections: Array.from(document.querySelectorAll("section[id]"), s => s.id),
})))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("waiting for %s to render: %v", pageURL, err)
	}
	opened := Opened{Load: time.Duration(seen.LoadMs * float64(time.Millisecond)), Sections: seen.Sections}

	var problems []string
	// The screenshot shows the page as it opens; then folded parts
	// (<details>) are unfolded so that their charts are checked too.
	if screenshotPath != "" {
		if err := saveFullScreenshot(bctx, screenshotPath); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](
		`document.querySelectorAll("details").forEach(d => d.open = true)`)); err != nil {
		t.Fatalf("unfolding the details of %s: %v", pageURL, err)
	}
	problems = append(problems, checkCharts(bctx, minCharts)...)
	if err := ctx.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("browser check ran out of time (%s): %v", checkTimeout, err))
	}

	// Later commands returned, so every event the page caused is recorded.
	ev.mu.Lock()
	problems = append(ev.problems, problems...)
	requests := ev.requests
	ev.mu.Unlock()
	for _, p := range problems {
		t.Errorf("%s: %s", htmlPath, p)
	}
	if len(problems) > 0 && len(requests) > 0 {
		t.Logf("%s: requests made by the page:\n\t%s", htmlPath, strings.Join(requests, "\n\t"))
	}
	return opened
}

// findBrowser returns the path of the first browser of browserNames on PATH,
// or "".
func findBrowser() string {
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// events collects what the page does while it is open. record runs on the
// goroutine that reads the browser's messages, so it only appends.
type events struct {
	mu       sync.Mutex
	requests []string
	problems []string
}

func (e *events) record(v any) {
	var problem, request string
	switch v := v.(type) {
	case *runtime.EventConsoleAPICalled:
		if v.Type == runtime.ConsoleAPICalledTypeError || v.Type == runtime.ConsoleAPICalledTypeAssert {
			problem = fmt.Sprintf("console.%s: %s", v.Type, remoteArgs(v.Args))
		}
	case *runtime.EventExceptionThrown:
		problem = "uncaught exception: " + exceptionText(v.ExceptionDetails)
	case *log.EventEntryAdded:
		// Browser-side errors such as a blocked script; network errors come
		// from EventLoadingFailed with more detail.
		if v.Entry != nil && v.Entry.Level == log.EntryLevelError && v.Entry.Source != log.EntrySourceNetwork {
			problem = fmt.Sprintf("browser %s error: %s", v.Entry.Source, v.Entry.Text)
		}
	case *network.EventRequestWillBeSent:
		if v.Request != nil {
			request = v.Request.URL
		}
	case *network.EventWebSocketCreated:
		request = v.URL
	case *network.EventLoadingFailed:
		problem = fmt.Sprintf("%s failed to load: %s", resourceName(v.Type), v.ErrorText)
		if v.BlockedReason != "" {
			problem += " (blocked: " + string(v.BlockedReason) + ")"
		}
	}
	if problem == "" && request == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if problem != "" {
		e.problems = append(e.problems, problem)
	}
	if request != "" {
		e.requests = append(e.requests, shorten(request))
		if !offlineURL(request) {
			e.problems = append(e.problems, "requests "+shorten(request)+": the report must work offline (only file: and data: URLs)")
		}
	}
}

// offlineURL reports whether a request for u is allowed: the report's own
// file: and data: URLs, plus blob: and about: (made in the page) and the
// browser's internal schemes, which a report cannot cause. Anything else,
// http(s) and ws(s) above all, goes to the network.
func offlineURL(u string) bool {
	scheme, _, ok := strings.Cut(u, ":")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "file", "data", "blob", "about", "chrome", "chrome-extension", "chrome-untrusted", "devtools":
		return true
	}
	return false
}

func resourceName(t network.ResourceType) string {
	if t == "" {
		return "resource"
	}
	return strings.ToLower(string(t))
}

// shorten keeps long data: URLs readable in a failure message.
func shorten(u string) string {
	const max = 120
	if len(u) <= max {
		return u
	}
	return u[:max] + "…"
}

func remoteArgs(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		parts = append(parts, remoteText(a))
	}
	return strings.Join(parts, " ")
}

func remoteText(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	if len(o.Value) > 0 {
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
		return string(o.Value)
	}
	if o.Description != "" {
		return o.Description
	}
	return string(o.Type)
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	text := d.Text
	if d.Exception != nil {
		if s := remoteText(d.Exception); s != "" {
			text += " " + s
		}
	}
	if d.URL != "" {
		text += fmt.Sprintf(" at %s:%d:%d", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	}
	return text
}

// chart is what the page reports about one chart svg.
type chart struct {
	Label  string  `json:"label"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

type chartSurvey struct {
	Charts []chart `json:"charts"`
	// FiguresWithoutSVG names the figure.chart elements that hold no svg.
	FiguresWithoutSVG []string `json:"figuresWithoutSVG"`
}

// chartsJS lists the chart svgs in document order; each is labelled by its
// figure's id or caption so a failure names the chart.
const chartsJS = `
function label(fig, i) {
	const cap = fig.querySelector("figcaption");
	const name = fig.id || (cap ? cap.textContent.trim().slice(0, 60) : "");
	return "chart " + (i + 1) + (name ? " (" + name + ")" : "");
}
function chartSVGs() {
	return Array.from(document.querySelectorAll(` + "`" + chartSelector + "`" + `))
		.filter(s => s.parentElement.closest("svg") === null);
}
`

func checkCharts(ctx context.Context, minCharts int) []string {
	survey, err := chromedp.Run(ctx, chromedp.Evaluate[chartSurvey](`(() => {`+chartsJS+`
	const figs = Array.from(document.querySelectorAll("figure.chart"));
	return {
		charts: chartSVGs().map((s, i) => {
			const r = s.getBoundingClientRect();
			return {label: label(s.closest("figure.chart"), i), width: r.width, height: r.height};
		}),
		figuresWithoutSVG: figs.map((f, i) => f.querySelector("svg") ? "" : label(f, i)).filter(l => l !== ""),
	};
})()`))
	if err != nil {
		return []string{"listing the charts: " + err.Error()}
	}

	var problems []string
	for _, l := range survey.FiguresWithoutSVG {
		problems = append(problems, fmt.Sprintf("figure.chart %s has no svg", l))
	}
	if len(survey.Charts) < minCharts {
		problems = append(problems, fmt.Sprintf("found %d %q elements, want at least %d", len(survey.Charts), chartSelector, minCharts))
	}
	for i, c := range survey.Charts {
		if c.Width <= 0 || c.Height <= 0 {
			problems = append(problems, fmt.Sprintf("%s has zero size (%gx%g)", c.Label, c.Width, c.Height))
			continue
		}
		img, err := chartScreenshot(ctx, i)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: screenshot: %v", c.Label, err))
			continue
		}
		if why := blank(img); why != "" {
			problems = append(problems, fmt.Sprintf("%s is blank: %s", c.Label, why))
		}
	}
	return problems
}

// chartScreenshot scrolls chart i into view and returns a PNG of it.
func chartScreenshot(ctx context.Context, i int) ([]byte, error) {
	clip, err := chromedp.Run(ctx, chromedp.Evaluate[page.Viewport](fmt.Sprintf(`(() => {`+chartsJS+`
	const s = chartSVGs()[%d];
	s.scrollIntoView({block: "center", inline: "center"});
	const r = s.getBoundingClientRect(), d = document.documentElement.getBoundingClientRect();
	return {x: r.left - d.left, y: r.top - d.top, width: r.width, height: r.height, scale: 1};
})()`, i)))
	if err != nil {
		return nil, err
	}
	// Whole pixels, as Chrome's own "Capture node screenshot" does.
	x, y := float64(int(clip.X)), float64(int(clip.Y))
	clip.Width, clip.Height = float64(int(clip.Width+clip.X-x+0.5)), float64(int(clip.Height+clip.Y-y+0.5))
	clip.X, clip.Y = x, y
	if clip.Width < 1 || clip.Height < 1 {
		return nil, errors.New("less than one pixel")
	}
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng,
		Clip:   &clip,
		// The chart is in view: the browser paints the viewport alone.
		// Beyond it, every shot repainted the whole page, which made a
		// 53-chart report's check take 37 s of Chromium's CPU, not 9.
		CaptureBeyondViewport: ptr(false),
	})
	return res.Data, err
}

func saveFullScreenshot(ctx context.Context, path string) error {
	m, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return fmt.Errorf("full-page screenshot: %w", err)
	}
	clip := page.Viewport{Width: 1000, Height: 800, Scale: 1}
	if s := m.CSSContentSize; s != nil && s.Width > 0 && s.Height > 0 {
		clip.Width, clip.Height = s.Width, s.Height
	}
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format:                page.CaptureScreenshotFormatPng,
		Clip:                  &clip,
		CaptureBeyondViewport: ptr(true),
	})
	if err != nil {
		return fmt.Errorf("full-page screenshot: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("full-page screenshot: %w", err)
	}
	if err := os.WriteFile(path, res.Data, 0o644); err != nil {
		return fmt.Errorf("full-page screenshot: %w", err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
