package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/serve"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/testenv"
)

const consoleToken = "console-test-token"

// browserPage is the console open in a browser the test drives: Chromium
// over its DevTools protocol, Firefox over WebDriver BiDi.
type browserPage interface {
	navigate(url string) error
	// eval gives the JSON of the value of a script (an expression, or
	// statements whose last is one) run in the page.
	eval(expr string) (json.RawMessage, error)
	screenshot(path string) error
	// problems gives what the page logged as errors, threw, or failed to
	// load, besides the refusals the test causes.
	problems() []string
}

// The console, driven end to end in a real Chromium and a real Firefox,
// each against its own serve and a real PostgreSQL: it asks for the token
// on the first 401, shows a 400 next to its field (a TPC-C, a TPC-H and a
// durability run's), runs a durability test on a managed server and
// follows its cycle, starts a quick disk run at a fixed rate and follows
// it and a backup, validates a scenario, starts a quick TPC-C run and
// follows it live (the TPM text changes as the seconds come), shows it
// done, opens its report, compares two finished runs, and cancels a queued
// and a running run.
func TestConsoleChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	consoleFlow(t, "chromium", openBrowser(t, bin))
}

func TestConsoleFirefox(t *testing.T) {
	t.Parallel()
	bin := firefox(t)
	consoleFlow(t, "firefox", openFirefox(t, bin))
}

// consoleFlow drives the console in p; its screenshots are NAME-*.png.
func consoleFlow(t *testing.T, name string, p browserPage) {
	fiotest.Require(t)
	dsn := tpccDSN(t)
	managed := pgtest.StartManaged(t, context.Background()) // a durability test's, which crashes it
	tpcctest.Build(t, context.Background(), managed.DSN, 1)
	srv := startServe(t, serve.Options{Token: consoleToken})
	base := srv.url
	art := reporttest.ArtifactDir(t)
	if err := p.navigate(base + "/"); err != nil {
		t.Fatalf("opening the console: %v", err)
	}

	// The first API call is refused: the console asks for the token once.
	waitJS(t, p, 20*time.Second, "the token dialog", `document.getElementById("token-dialog").open`)
	js(t, p, fmt.Sprintf(`document.getElementById("token-input").value = %q;
		document.getElementById("token-submit").click(); true`, consoleToken))
	waitJS(t, p, 20*time.Second, "the scenarios listed with the token",
		`!document.getElementById("token-dialog").open && document.getElementById("scenario-name").options.length > 0`)

	// A bad duration, rate and think time are refused, each next to its
	// field.
	js(t, p, `document.getElementById("start-think-time").value = "-1s"; true`)
	fillStart(t, p, dsn, "1", "1s", "soon", "fast")
	waitJS(t, p, 20*time.Second, "the duration's, the rate's and the think time's errors next to them",
		`document.getElementById("err-duration").textContent.length > 0 && document.getElementById("err-rate").textContent.length > 0 &&
		document.getElementById("err-think_time").textContent.includes("negative")`)
	js(t, p, `document.getElementById("start-think-time").value = ""; true`)
	if text := jsString(t, p, `document.getElementById("err-dsn").textContent`); text != "" {
		t.Errorf("the DSN shows an error for a bad duration: %q", text)
	}

	// A quick TPC-H run's problems are refused each next to its field: a
	// checked box is sent as true.
	js(t, p, fmt.Sprintf(`(() => {
		document.getElementById("tpch-dsn").value = %q;
		document.getElementById("tpch-seed").value = "7";
		document.getElementById("tpch-validate").checked = true;
		document.getElementById("tpch-streams").value = "-1";
		document.getElementById("tpch-submit").click();
		return true;
	})()`, dsn))
	waitJS(t, p, 20*time.Second, "the TPC-H run's seed and streams errors next to them",
		`document.getElementById("err-tpch-seed").textContent.includes("validate") && document.getElementById("err-tpch-streams").textContent.length > 0`)
	if text := jsString(t, p, `document.getElementById("err-tpch-dsn").textContent + document.getElementById("tpch-error").textContent`); text != "" {
		t.Errorf("the TPC-H form shows other errors: %q", text)
	}

	// A valid one, followed live: its power test's 22 queries come as
	// bars, all answered right, the geometric mean so far above them, in
	// place of the TPC-C charts.
	js(t, p, fmt.Sprintf(`(() => {
		document.getElementById("tpch-dsn").value = %q;
		document.getElementById("tpch-seed").value = "";
		document.getElementById("tpch-streams").value = "";
		document.getElementById("tpch-no-refresh").checked = true;
		document.getElementById("tpch-submit").click();
		return true;
	})()`, tpchDSN(t)))
	waitJS(t, p, 20*time.Second, "the TPC-H run followed", `document.getElementById("live-what").textContent.startsWith("Run ")`)
	tpchRun := strings.TrimPrefix(jsString(t, p, `document.getElementById("live-what").textContent`), "Run ")
	waitDone(t, p, 60*time.Second)
	if n := jsInt(t, p, `document.querySelectorAll('#chart-tpch rect.s0[data-query^="Q"]').length`); n != 22 {
		t.Errorf("the TPC-H chart has %d power bars of a query; want 22", n)
	}
	if n := jsInt(t, p, `document.querySelectorAll('#chart-tpch rect.bad').length`); n != 0 {
		t.Errorf("%d bars drawn as wrong answers; want none", n)
	}
	if text := jsString(t, p, `document.querySelector("#chart-tpch figcaption").textContent`); !strings.Contains(text, "power test 1: geometric mean") || !strings.Contains(text, "over 22 queries") {
		t.Errorf("the TPC-H chart's caption %q; want the power test's geometric mean over 22 queries", text)
	}
	if step := jsString(t, p, `document.getElementById("live-step").textContent`); !strings.HasPrefix(step, "power 1 Q") {
		t.Errorf("the live step %q; want the power test's last query", step)
	}
	if jsInt(t, p, `document.querySelectorAll("#chart-tpm, #chart-latency").length`) != 0 {
		t.Error("the TPC-H run shows the TPC-C charts")
	}
	shot(t, p, filepath.Join(art, name+"-tpch.png"))

	// A durability test on a managed server: bad input next to its fields,
	// then one kill cycle followed live, its verdict in the notes.
	js(t, p, `loadServers(); true`)
	waitJS(t, p, 20*time.Second, "the managed server offered",
		fmt.Sprintf(`Array.from(document.getElementById("durability-managed").options).some(o => o.value === %q)`, managed.DataDir))
	js(t, p, fmt.Sprintf(`(() => {
		document.getElementById("durability-managed").value = %q;
		document.getElementById("durability-cycles").value = "0";
		document.getElementById("durability-rate").value = "0";
		document.getElementById("durability-run-before-fault").value = "1 second";
		document.getElementById("durability-submit").click();
		return true;
	})()`, managed.DataDir))
	waitJS(t, p, 20*time.Second, "the cycles', the rate's and the fault time's errors next to them",
		`["cycles", "rate", "run_before_fault"].every(f => document.getElementById("err-durability-" + f).textContent.length > 0)`)
	if text := jsString(t, p, `document.getElementById("err-durability-managed").textContent + document.getElementById("durability-error").textContent`); text != "" {
		t.Errorf("the managed server shows an error for bad numbers: %q", text)
	}
	js(t, p, `(() => {
		for (const [f, v] of [["cycles", "1"], ["vus", "1"], ["rate", "1200"], ["run-before-fault", "2s"]]) document.getElementById("durability-" + f).value = v;
		document.getElementById("durability-cold-cache").checked = true;
		document.getElementById("durability-submit").click();
		return true;
	})()`)
	waitJS(t, p, 20*time.Second, "the durability test followed",
		fmt.Sprintf(`document.getElementById("live-what").textContent.startsWith("Run ") && !document.getElementById("live-what").textContent.endsWith(%q)`, tpchRun))
	durRun := strings.TrimPrefix(jsString(t, p, `document.getElementById("live-what").textContent`), "Run ")
	waitDone(t, p, 90*time.Second)
	if notes := jsString(t, p, `document.getElementById("live-notes").innerText`); !strings.Contains(notes, "cycle 1: ") || !strings.Contains(notes, " 0 lost; recovered in ") ||
		!strings.Contains(notes, "; ok") {
		t.Errorf("the live notes lack the cycle's verdict:\n%s", notes)
	}
	if step := jsString(t, p, `document.getElementById("live-step").textContent`); step != "cycle 1 of 1" {
		t.Errorf("the live step %q; want cycle 1 of 1", step)
	}
	if code, body := srv.do(t, "GET", "/api/v1/runs/"+durRun, nil, nil); code != 200 || !strings.Contains(body, `"cold_cache": true`) {
		t.Errorf("the durability run: %d; want its parameters to hold the checked cold cache\n%s", code, body)
	}
	waitJS(t, p, 20*time.Second, "the durability run listed with its verdict",
		fmt.Sprintf(`document.querySelector('#runs-table tbody tr[data-id=%q]')?.textContent.includes("1 cycle, 0 lost, passed")`, durRun))
	shot(t, p, filepath.Join(art, name+"-durability.png"))

	// A quick disk run: a profile and points of its own together are
	// refused next to the profile, a bad rate next to its field; then the
	// quick profile at a fixed rate, followed: each point's figures and
	// what it offered are in the notes.
	js(t, p, fmt.Sprintf(`(() => {
		for (const [f, v] of [["target", %q], ["profile", "quick"], ["bs", "4k"], ["duration", "1s"], ["ramp", "0s"], ["size", "8MiB"], ["rate-iops", "fast"]]) document.getElementById("disk-" + f).value = v;
		document.getElementById("disk-submit").click();
		return true;
	})()`, t.TempDir()))
	waitJS(t, p, 20*time.Second, "the profile's error next to it", `document.getElementById("err-disk-profile").textContent.includes("describe the points twice")`)
	js(t, p, `document.getElementById("disk-bs").value = ""; document.getElementById("disk-submit").click(); true`)
	waitJS(t, p, 20*time.Second, "the rate's error next to it", `document.getElementById("err-disk-rate_iops").textContent.length > 0`)
	if text := jsString(t, p, `document.getElementById("err-disk-target").textContent + document.getElementById("err-disk-profile").textContent + document.getElementById("disk-error").textContent`); text != "" {
		t.Errorf("the disk form shows other errors for a bad rate: %q", text)
	}
	js(t, p, `document.getElementById("disk-rate-iops").value = "200"; document.getElementById("disk-submit").click(); true`)
	waitJS(t, p, 20*time.Second, "the disk run followed",
		fmt.Sprintf(`document.getElementById("live-what").textContent.startsWith("Run ") && !document.getElementById("live-what").textContent.endsWith(%q)`, durRun))
	waitDone(t, p, 90*time.Second)
	notes := jsString(t, p, `document.getElementById("live-notes").innerText`)
	if step := jsString(t, p, `document.getElementById("live-step").textContent`); step != "point 4 of 4" {
		t.Errorf("the live step %q; want point 4 of 4", step)
	}
	if n := jsInt(t, p, `document.querySelectorAll("#chart-tpm, #chart-latency").length`); n != 0 {
		t.Errorf("the disk run shows %d TPC-C charts; want none", n)
	}
	// Its telemetry, which comes between ticks, is drawn.
	if n := jsInt(t, p, `document.querySelectorAll("#chart-iops polyline, #chart-cpu polyline").length`); n < 2 {
		t.Errorf("the device IOPS and CPU charts have %d lines; want the disk run's telemetry drawn", n)
	}
	if n := len(regexp.MustCompile(`point \S+: read [\d,]+ IOPS, [\d.]+ MB/s, p99 [\d.]+ ms|point \S+: write [\d,]+ IOPS`).FindAllString(notes, -1)); n != 4 {
		t.Errorf("the live notes have %d disk points' figures; want the quick profile's 4:\n%s", n, notes)
	}
	if !strings.Contains(notes, "offered 200 IOPS (200 a second on 1 job): ") || !strings.Contains(notes, "offered 400 IOPS (200 a second on each of 2 jobs): ") {
		t.Errorf("the live notes lack what the points offered:\n%s", notes)
	}
	shot(t, p, filepath.Join(art, name+"-disk.png"))

	// Points of its own at two rates: the sweep's knee ends the notes.
	diskRun := strings.TrimPrefix(jsString(t, p, `document.getElementById("live-what").textContent`), "Run ")
	js(t, p, `(() => {
		for (const [f, v] of [["profile", ""], ["bs", "4k"], ["rw", "randread"], ["iodepth", "1"], ["jobs", "1"], ["rate-iops", "100,200"]]) document.getElementById("disk-" + f).value = v;
		document.getElementById("disk-submit").click();
		return true;
	})()`)
	waitJS(t, p, 20*time.Second, "the second disk run followed",
		fmt.Sprintf(`document.getElementById("live-what").textContent.startsWith("Run ") && !document.getElementById("live-what").textContent.endsWith(%q)`, diskRun))
	waitDone(t, p, 90*time.Second)
	notes = jsString(t, p, `document.getElementById("live-notes").innerText`)
	if n := strings.Count(notes, "point 4k-randread-qd1x1-rate"); n != 2 || !strings.Contains(notes, "knee of 4k-randread-qd1x1: ") {
		t.Errorf("the live notes have %d rated points' figures; want 2, and the knee:\n%s", n, notes)
	}

	// A logical backup of the managed server, followed: each phase's time
	// in the notes.
	var backup struct{ ID string }
	if code, body := srv.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "backup", "dsn": managed.DSN, "target": t.TempDir(),
		"cycles": 1, "logical": true, "jobs": 1}, &backup); code != 202 {
		t.Fatalf("a backup run: %d %s", code, body)
	}
	js(t, p, fmt.Sprintf(`watch("run", %q); true`, backup.ID))
	waitDone(t, p, 90*time.Second)
	if notes := jsString(t, p, `document.getElementById("live-notes").innerText`); !regexp.MustCompile(`cycle 1 backup \(pg_dump\): [\d.]+ s, [\d.]+ MB/s`).MatchString(notes) ||
		!regexp.MustCompile(`cycle 1 restore \(pg_restore\): [\d.]+ s, [\d.]+ MB/s, (not )?verified`).MatchString(notes) {
		t.Errorf("the live notes lack the backup's phases:\n%s", notes)
	}
	if n := jsInt(t, p, `document.querySelectorAll("#chart-cpu polyline").length`); n == 0 {
		t.Error("the CPU chart has no line; want the backup's telemetry drawn")
	}

	// A bundled scenario at a scale shows its variables there; a bad value
	// is refused with its line and column.
	js(t, p, `(() => {
		const name = document.getElementById("scenario-name");
		name.value = "quick";
		name.dispatchEvent(new Event("change"));
		return true;
	})()`)
	waitJS(t, p, 20*time.Second, "the quick scenario's scales",
		`Array.from(document.getElementById("scenario-scale").options, o => o.value).includes("paper")`)
	js(t, p, `(() => {
		const scale = document.getElementById("scenario-scale");
		scale.value = "paper";
		scale.dispatchEvent(new Event("change"));
		return true;
	})()`)
	waitJS(t, p, 20*time.Second, "the paper scale's warehouses", `document.getElementById("var-warehouses")?.value === "100"`)
	js(t, p, `(() => {
		const d = document.getElementById("var-duration");
		d.value = "soon";
		d.dispatchEvent(new Event("input"));
		document.getElementById("scenario-validate").click();
		return true;
	})()`)
	waitJS(t, p, 20*time.Second, "the scenario's error at its line and column",
		`/(^|:)\d+:\d+: /.test(document.getElementById("scenario-errors").textContent)`)
	t.Logf("scenario error: %s", jsString(t, p, `document.getElementById("scenario-errors").textContent`))
	shot(t, p, filepath.Join(art, name+"-scenario.png"))

	// A quick run, followed live: open-loop at 1,200 TPM (a closed loop
	// spends a core here, beside the browser).
	fillStart(t, p, dsn, "1", "1s", "8s", "1200")
	waitJS(t, p, 20*time.Second, "the run followed",
		fmt.Sprintf(`document.getElementById("live-what").textContent.startsWith("Run ") && !document.getElementById("live-what").textContent.endsWith(%q)`, backup.ID))
	first := strings.TrimPrefix(jsString(t, p, `document.getElementById("live-what").textContent`), "Run ")
	seen := watchTPM(t, p, 40*time.Second)
	t.Logf("live TPM texts: %q", seen)
	shot(t, p, filepath.Join(art, name+"-live.png"))
	waitDone(t, p, 60*time.Second)
	for _, id := range []string{"live-nopm", "live-p95", "live-p99"} {
		if text := jsString(t, p, `document.getElementById("`+id+`").textContent`); text == "–" || text == "" {
			t.Errorf("#%s shows %q after the run; want a figure", id, text)
		}
	}
	if n := jsInt(t, p, `document.querySelectorAll("#chart-tpm polyline").length`); n != 3 {
		t.Errorf("the TPM chart has %d lines; want TPM, NOPM and the offered rate", n)
	}
	if text := jsString(t, p, `document.getElementById("live-offered").textContent`); !strings.HasPrefix(text, "1,200 · ") || !strings.HasSuffix(text, " waiting") {
		t.Errorf("the live offered rate shows %q; want 1,200 with the second's late and waiting arrivals", text)
	}
	if notes := jsString(t, p, `document.getElementById("live-notes").innerText`); !strings.Contains(notes, "step result: NOPM ") ||
		!strings.Contains(notes, "offered 1,200 TPM (poisson arrivals, ") {
		t.Errorf("the live notes lack the step's result and what it offered:\n%s", notes)
	}
	if code, body := srv.do(t, "GET", "/api/v1/runs/"+first, nil, nil); code != 200 || !strings.Contains(body, `"offered_tpm": 1200`) {
		t.Errorf("the run started with a rate: %d; want its step offered 1200 TPM\n%s", code, body)
	}
	shot(t, p, filepath.Join(art, name+"-done.png"))

	// The finished run's report, in the page.
	js(t, p, `document.getElementById("live-report").click(); true`)
	waitReport(t, p, first)
	shot(t, p, filepath.Join(art, name+"-report.png"))

	// A second short run, then both compared.
	fillStart(t, p, dsn, "1", "1s", "3s", "1200")
	waitJS(t, p, 20*time.Second, "the second run followed",
		fmt.Sprintf(`document.getElementById("live-what").textContent.startsWith("Run ") && !document.getElementById("live-what").textContent.endsWith(%q)`, first))
	second := strings.TrimPrefix(jsString(t, p, `document.getElementById("live-what").textContent`), "Run ")
	waitDone(t, p, 60*time.Second)
	waitJS(t, p, 20*time.Second, "both runs listed complete", fmt.Sprintf(
		`document.querySelector('#runs-table tbody tr[data-status="complete"][data-id=%q]') && document.querySelector('#runs-table tbody tr[data-status="complete"][data-id=%q]')`,
		first, second))
	js(t, p, fmt.Sprintf(`for (const id of [%q, %q]) {
		document.querySelector('#runs-table tbody tr[data-id="' + id + '"] input[type=checkbox]').click();
	}
	document.getElementById("runs-compare").click(); true`, first, second))
	waitJS(t, p, 60*time.Second, "a verdict",
		`Array.from(document.querySelectorAll("#compare-table td.verdict")).some(td => td.textContent.trim() !== "")`)
	t.Logf("verdicts: %s", jsString(t, p, `Array.from(document.querySelectorAll("#compare-table tbody tr"), tr => tr.cells[0].textContent + " " + tr.cells[4].textContent + " " + tr.cells[6].textContent).join("; ")`))
	waitReport(t, p, first+","+second)
	shot(t, p, filepath.Join(art, name+"-compare.png"))

	// The queue: a run queued behind a running one is removed with its
	// Cancel button, and the running one interrupted with its own.
	var running, waiting struct{ ID string }
	for _, r := range []*struct{ ID string }{&running, &waiting} {
		if code, body := srv.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "tpcc", "dsn": dsn, "vus": "1", "rampup": "1s", "duration": "1m",
			"rate": "600"}, r); code != 202 {
			t.Fatalf("queueing a run: %d %s", code, body)
		}
	}
	queueRow := func(id string) string { return `document.querySelector('#queue-table tbody tr[data-id="` + id + `"]')` }
	waitJS(t, p, 20*time.Second, "both runs in the queue", queueRow(running.ID)+` && `+queueRow(waiting.ID))
	shot(t, p, filepath.Join(art, name+"-queue.png"))
	js(t, p, queueRow(waiting.ID)+`.querySelector("button.cancel").click(); true`)
	waitJS(t, p, 20*time.Second, "the queued run removed", `!`+queueRow(waiting.ID))
	waitJS(t, p, 20*time.Second, "the first run running", queueRow(running.ID)+`?.cells[2].textContent === "running"`)
	js(t, p, queueRow(running.ID)+`.querySelector("button.cancel").click(); true`)
	waitJS(t, p, 60*time.Second, "the queue empty", `!document.getElementById("queue-empty").hidden`)
	var shown struct{ Run struct{ Status string } }
	if code, body := srv.do(t, "GET", "/api/v1/runs/"+running.ID, nil, &shown); code != 200 || shown.Run.Status != "interrupted" {
		t.Errorf("the cancelled run: %d, status %q; want interrupted\n%s", code, shown.Run.Status, body)
	}

	// A step's result note says when it was cut short; what a reset of its
	// counters means follows it, in the result's notes.
	if got, want := jsString(t, p, `stepNote({ nopm: 1000, tpm: 2300, measured_seconds: 2.43, interrupted: true, counters_reset: 1 })`),
		"step result: NOPM 1,000, TPM 2,300, cut short after 2.4 s"; got != want {
		t.Errorf("the note of a step cut short: %q; want %q", got, want)
	}
	if got, want := jsString(t, p, `stepNote({ nopm: 1000, tpm: 2300, measured_seconds: 6.81, interrupted: true, server_lost: true })`),
		"step result: NOPM 1,000, TPM 2,300, cut short by the server's loss after 6.8 s"; got != want {
		t.Errorf("the note of a step its server's loss cut short: %q; want %q", got, want)
	}

	// A scenario's TPC-H runs one after another (tiers, engines), as its
	// event stream tells them, each get a chart: the second's one query
	// does not land among the first's 22. The events are the stream's
	// own, handed to the page's handler; the runs above were real.
	js(t, p, `(() => {
		const stop = { stopped: false };
		live.charts = liveCharts();
		onLiveEvent(stop, "progress", { started: { run_id: "A", kind: "tpch", params: { label: "db-fast" } } });
		for (let q = 1; q <= 22; q++) onLiveEvent(stop, "result", { tpch: { test: "power", rep: 1, query: q, seconds: 1, status: "ok", rows: 1 } });
		onLiveEvent(stop, "progress", { started: { run_id: "B", kind: "tpch", params: { label: "db-slow" } } });
		onLiveEvent(stop, "result", { tpch: { test: "power", rep: 1, query: 1, seconds: 9, status: "ok", rows: 1 } });
		return true;
	})()`)
	waitJS(t, p, 20*time.Second, "two TPC-H charts, one per run",
		`document.querySelectorAll('#chart-tpch rect.s0').length === 1 && document.querySelectorAll('#chart-tpch-A rect.s0').length === 22`)
	// A TPC-C run after them in the same stream gets its charts back.
	js(t, p, `onLiveEvent({ stopped: false }, "tick", { t: new Date().toISOString(),
		tpcc: { step: 1, steps: 1, vus: 1, phase: "measure", tpm: 1200, nopm: 520, new_order_p95_ms: 3, new_order_p99_ms: 5 } }); true`)
	waitJS(t, p, 20*time.Second, "the TPC-C charts back after the TPC-H runs",
		`document.querySelectorAll("#chart-tpm polyline").length === 2 && document.querySelectorAll("#chart-latency polyline").length === 2`)
	latestCap, firstCap := jsString(t, p, `document.querySelector("#chart-tpch figcaption").textContent`),
		jsString(t, p, `document.querySelector("#chart-tpch-A figcaption").textContent`)
	if !strings.Contains(latestCap, "of db-slow") || !strings.Contains(latestCap, "over 1 query") || !strings.Contains(firstCap, "of db-fast") || !strings.Contains(firstCap, "over 22 queries") {
		t.Errorf("the TPC-H charts' captions %q and %q; want the latest run's (db-slow, 1 query) and the first's (db-fast, 22)", latestCap, firstCap)
	}

	for _, problem := range p.problems() {
		t.Errorf("the console in %s: %s", name, problem)
	}
}

// chromium finds the browser; CI may not skip without it.
func chromium(t *testing.T) string {
	return browserBinary(t, "Chromium", "chromium", "chromium", "chromium-browser", "google-chrome")
}

// browserBinary finds the first of names on PATH; without one it fails
// under CI=true and skips otherwise, naming the package to install.
func browserBinary(t *testing.T, what, pkg string, names ...string) string {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no %s on PATH; install it with `apt-get install %s`", what, pkg)
	testenv.SkipOrFail(t, "%s", msg)
	return ""
}

// chromePage is a headless Chromium driven by chromedp.
type chromePage struct {
	ctx    context.Context
	mu     sync.Mutex
	logged []string
}

func (c *chromePage) navigate(url string) error { return chromedp.Do(c.ctx, chromedp.Navigate(url)) }

func (c *chromePage) eval(expr string) (json.RawMessage, error) {
	return chromedp.Run(c.ctx, chromedp.Evaluate[json.RawMessage](expr))
}

func (c *chromePage) problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.logged...)
}

// openBrowser starts a headless Chromium for the test.
func openBrowser(t *testing.T, bin string) *chromePage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1200, 900),
		chromedp.Env("TMPDIR="+t.TempDir())) // its org.chromium.Chromium.* directories go with the test's (reporttest)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	c := &chromePage{ctx: bctx}
	record := func(ev any) {
		var p string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				p = "console.error"
				for _, a := range ev.Args {
					p += " " + string(a.Value) + a.Description
				}
			}
		case *runtime.EventExceptionThrown:
			p = "uncaught exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				p += " " + ev.ExceptionDetails.Exception.Description
			}
		case *log.EventEntryAdded:
			// A 401 is the console's cue to ask for the token, a 400 a
			// bad duration the test gives on purpose: neither is a fault
			// of the console.
			if ev.Entry != nil && ev.Entry.Level == log.EntryLevelError && !expectedRefusal(ev.Entry) {
				p = fmt.Sprintf("browser %s error: %s", ev.Entry.Source, ev.Entry.Text)
			}
		case *network.EventLoadingFailed:
			if !ev.Canceled { // a followed stream is aborted when the next run is followed
				p = fmt.Sprintf("%s failed to load: %s %s", ev.Type, ev.ErrorText, ev.BlockedReason)
			}
		}
		if p != "" {
			c.mu.Lock()
			c.logged = append(c.logged, p)
			c.mu.Unlock()
		}
	}
	if err := chromedp.Listen(bctx, record); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	return c
}

// expectedRefusal reports whether a logged failed request is one the test
// causes on purpose.
func expectedRefusal(e *log.Entry) bool {
	switch {
	case strings.Contains(e.Text, "status of 401"), strings.Contains(e.Text, "status of 400") && strings.HasSuffix(e.URL, "/api/v1/runs"):
		return true
	case strings.Contains(e.Text, "status of 400"):
		return strings.Contains(e.URL, "/api/v1/scenarios?validate=1")
	}
	return false
}

// js runs an expression in the page.
func js(t *testing.T, p browserPage, expr string) {
	t.Helper()
	if _, err := p.eval(expr); err != nil {
		t.Fatalf("in the page: %v\n%s", err, expr)
	}
}

// jsValue evaluates expr in the page into v.
func jsValue[V any](t *testing.T, p browserPage, expr string) V {
	t.Helper()
	var v V
	raw, err := p.eval(expr)
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil {
		t.Fatalf("in the page: %v\n%s", err, expr)
	}
	return v
}

func jsString(t *testing.T, p browserPage, expr string) string {
	t.Helper()
	return jsValue[string](t, p, expr)
}

func jsInt(t *testing.T, p browserPage, expr string) int {
	t.Helper()
	return jsValue[int](t, p, expr)
}

// waitJS waits until expr is true in the page.
func waitJS(t *testing.T, p browserPage, timeout time.Duration, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		raw, err := p.eval("!!(" + expr + ")")
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if string(raw) == "true" {
			return
		}
		if time.Now().After(deadline) {
			shot(t, p, filepath.Join(reporttest.ArtifactDir(t), "console-timeout-"+strings.ReplaceAll(t.Name(), "/", "-")+".png"))
			t.Fatalf("no %s within %s; the page says:\n%s", what, timeout,
				jsString(t, p, `document.getElementById("live").innerText + "\n" + document.getElementById("start").innerText + "\n" + document.getElementById("banner").innerText`))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fillStart fills the quick TPC-C form and submits it.
func fillStart(t *testing.T, p browserPage, dsn, vus, rampup, duration, rate string) {
	t.Helper()
	js(t, p, fmt.Sprintf(`(() => {
		const set = (id, v) => { document.getElementById(id).value = v; };
		set("start-dsn", %q); set("start-vus", %q); set("start-rampup", %q); set("start-duration", %q); set("start-rate", %q);
		document.getElementById("start-submit").click();
		return true;
	})()`, dsn, vus, rampup, duration, rate))
}

// watchTPM reads the live TPM text until it has changed at least twice
// after its first figure, and returns the texts seen.
func watchTPM(t *testing.T, p browserPage, timeout time.Duration) []string {
	t.Helper()
	var seen []string
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		text := jsString(t, p, `document.getElementById("live-tpm").textContent`)
		if text != "–" && (len(seen) == 0 || seen[len(seen)-1] != text) {
			seen = append(seen, text)
			if len(seen) >= 3 {
				return seen
			}
		}
		time.Sleep(150 * time.Millisecond)
	}
	t.Fatalf("the live TPM text changed %d times in %s (%q); want at least twice", max(len(seen)-1, 0), timeout, seen)
	return nil
}

// waitDone waits for the followed run to end and wants it complete.
func waitDone(t *testing.T, p browserPage, timeout time.Duration) {
	t.Helper()
	waitJS(t, p, timeout, "the run's end", `document.getElementById("live-cancel").hidden`)
	if status := jsString(t, p, `document.getElementById("live-status").textContent`); !strings.HasPrefix(status, "complete") {
		t.Fatalf("the run ended %q; want complete; notes:\n%s", status, jsString(t, p, `document.getElementById("live-notes").innerText`))
	}
}

// waitReport waits for the report of runs to be shown in the page's frame.
func waitReport(t *testing.T, p browserPage, runs string) {
	t.Helper()
	waitJS(t, p, 60*time.Second, "the report of "+runs, fmt.Sprintf(`(() => {
		if (document.getElementById("report-title").textContent !== "Report of " + %q.split(",").join(", ")) return false;
		const d = document.getElementById("report-frame").contentDocument;
		return d && d.readyState === "complete" && d.querySelectorAll("h1, h2").length > 0 && d.querySelectorAll("svg").length > 0 &&
			%q.split(",").every(id => d.body.textContent.includes(id));
	})()`, runs, runs))
}

// shot saves a full-page PNG screenshot.
func shot(t *testing.T, p browserPage, path string) {
	t.Helper()
	if err := p.screenshot(path); err != nil {
		t.Errorf("screenshot %s: %v", path, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

func (c *chromePage) screenshot(path string) error {
	m, err := chromedp.Call(c.ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return err
	}
	clip := page.Viewport{Width: 1200, Height: 900, Scale: 1}
	if s := m.CSSContentSize; s != nil && s.Width > 0 && s.Height > 0 {
		clip.Width, clip.Height = s.Width, s.Height
	}
	beyond := true
	res, err := chromedp.Call(c.ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng, Clip: &clip, CaptureBeyondViewport: &beyond})
	if err != nil {
		return err
	}
	if len(res.Data) == 0 {
		return errors.New("an empty screenshot")
	}
	return os.WriteFile(path, res.Data, 0o644)
}
