package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/freeport"
	"github.com/tierbench/tierbench/internal/testenv"
)

// requirePrometheus fails under CI=true and skips elsewhere when Debian's
// prometheus package (prometheus, promtool) is missing.
func requirePrometheus(t *testing.T) {
	t.Helper()
	for _, b := range []string{"prometheus", "promtool"} {
		if _, err := exec.LookPath(b); err != nil {
			testenv.SkipOrFail(t, "%s is not installed (scripts/setup.sh --test installs it)", b)
		}
	}
}

// freePort returns a port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Pick(0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startPrometheus runs a Prometheus server on 127.0.0.1 that scrapes
// 127.0.0.1:target every second, and returns its base URL.
func startPrometheus(t *testing.T, target int) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: tierbench
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:%d"]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command("prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("prometheus did not become ready on %s: %v\n%s", addr, err, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promQuery evaluates an instant query at ts and returns its one value
// (NaN when the result is empty).
func promQuery(t *testing.T, base, query string, ts time.Time) float64 {
	t.Helper()
	u := base + "/api/v1/query?" + url.Values{"query": {query}, "time": {strconv.FormatFloat(float64(ts.UnixNano())/1e9, 'f', 3, 64)}}.Encode()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	if r.Status != "success" {
		t.Fatalf("%s: %s", query, r.Error)
	}
	if len(r.Data.Result) == 0 {
		return math.NaN()
	}
	if len(r.Data.Result) > 1 {
		t.Fatalf("%s: %d series; want one", query, len(r.Data.Result))
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s: value %v", query, r.Data.Result[0].Value)
	}
	return v
}

// scrapeWhile runs tierbench with args, whose --metrics-listen is
// 127.0.0.1:port, and returns its exit code, stdout, stderr and the last
// exposition it served that contains until (text format), plus the
// OpenMetrics one fetched at the same time.
//
// names holds every tierbench_ metric any scrape served: a metric derived
// from an interval's activity (the cache hit ratio) is absent from a scrape
// whose last interval had none, as the one after the run can be.
func scrapeWhile(t *testing.T, port int, until string, args ...string) (code int, out, errOut, text, om string, names map[string]bool) {
	t.Helper()
	names = map[string]bool{}
	metricName := regexp.MustCompile(`(?m)^(tierbench_\w+)`)
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := runTierbench(t, args...)
		done <- result{c, o, e}
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	get := func(accept string) (string, string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), resp.Header.Get("Content-Type")
	}
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			if text == "" {
				t.Errorf("the endpoint never served %q while tierbench %s ran", until, args[0])
			} else if om == "" {
				t.Errorf("the endpoint served %q but never answered a request for OpenMetrics", until)
			}
			return r.code, r.out, r.err, text, om, names
		case <-tick.C:
			body, _ := get("")
			// Every series any scrape showed counts as exposed: a
			// ratio such as the cache hit rate is absent in a second
			// the server read nothing.
			for _, m := range metricName.FindAllStringSubmatch(body, -1) {
				names[m[1]] = true
			}
			if strings.Contains(body, until) {
				text = body
				// The endpoint may close between the two requests, at the
				// end of its grace: a failed request is tried again at the
				// next tick, and only a wrong answer is an error.
				if body, ct := get("application/openmetrics-text; version=1.0.0"); om == "" && ct != "" {
					if !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(body, "# EOF\n") {
						t.Errorf("asked for OpenMetrics, got %q ending %q", ct, body[max(0, len(body)-20):])
					}
					om = body
				}
			}
		}
	}
}

// A short TPC-C run with --metrics-listen (open-loop at 3,000 TPM: a
// closed loop's two VUs spent two cores), scraped every second by a real
// Prometheus: the NOPM rate over its measured interval is above 0 and the
// New-Order p99 is a latency, the exposition passes promtool, and every
// metric the Grafana dashboard queries is in what a TPC-C run and a disk
// run expose.
func TestLiveMetricsPrometheus(t *testing.T) {
	t.Parallel()
	requirePrometheus(t)
	fiotest.Require(t)
	dsn := tpcctest.Database(t, 1)
	port := freePort(t)
	prom := startPrometheus(t, port)
	res := t.TempDir()

	code, out, errOut, text, om, tpccNames := scrapeWhile(t, port, "tierbench_tpcc_step_nopm",
		"tpcc", "run", "--json", "--dsn", dsn, "--vus", "2", "--rate", "3000", "--rampup", "1s", "--duration", "6s", "--results", res,
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", port), "--metrics-grace", "3s")
	if code != 0 {
		t.Fatalf("tpcc run: exit %d: %s", code, errOut)
	}
	if want := fmt.Sprintf("metrics: serving http://127.0.0.1:%d/metrics", port); !strings.Contains(errOut, want) {
		t.Errorf("stderr does not say %q:\n%s", want, errOut)
	}
	var doc struct {
		RunID string `json:"run_id"`
		Steps []struct {
			NOPM         int64     `json:"nopm"`
			MeasureStart time.Time `json:"measure_start"`
			MeasureEnd   time.Time `json:"measure_end"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Steps) != 1 {
		t.Fatalf("tpcc run --json: %v\n%s", err, out)
	}
	st := doc.Steps[0]
	// Over the measured interval, as a dashboard's rate over a step would
	// be: a window of the interval (6 s) at its end. A shorter one held
	// fewer than the two scrapes rate() needs when a loaded machine delayed
	// some (NaN in a CI run).
	at := st.MeasureEnd
	window := fmt.Sprintf("%ds", int(st.MeasureEnd.Sub(st.MeasureStart).Seconds()+0.999))
	sel := fmt.Sprintf(`run=%q`, doc.RunID)
	scrapes := promQuery(t, prom, fmt.Sprintf(`count_over_time(tierbench_tpcc_db_new_orders_total{%s}[%s])`, sel, window), at)
	nopm := promQuery(t, prom, fmt.Sprintf(`60 * rate(tierbench_tpcc_db_new_orders_total{%s}[%s])`, sel, window), at)
	if !(nopm > 0) {
		t.Errorf("Prometheus has NOPM %g for run %s over the %s to %s (%g scrapes); want above 0 (the step measured %d)",
			nopm, doc.RunID, window, at, scrapes, st.NOPM)
	}
	p99 := promQuery(t, prom, fmt.Sprintf(`histogram_quantile(0.99, sum by (le) (rate(tierbench_tpcc_transaction_duration_seconds_bucket{%s,type="new_order"}[%s])))`, sel, window), at)
	if !(p99 > 0 && p99 < 10) {
		t.Errorf("Prometheus has a New-Order p99 of %g s for run %s (%g scrapes); want a latency between 0 and 10 s", p99, doc.RunID, scrapes)
	}
	gauge := promQuery(t, prom, fmt.Sprintf(`tierbench_tpcc_vus{%s}`, sel), at)
	if gauge != 2 {
		t.Errorf("tierbench_tpcc_vus = %g in Prometheus; want 2", gauge)
	}

	// promtool reads the text format only; the OpenMetrics one was checked
	// for its content type and end marker while it was served.
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if lint, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(lint))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, lint)
	}
	if !strings.Contains(om, "# TYPE tierbench_tpcc_transaction_duration_seconds histogram") {
		t.Error("the OpenMetrics exposition lacks the latency histogram")
	}
	if labelled := regexp.MustCompile(`(?m)^tierbench_\w+\{[^}]*run="`+doc.RunID+`"`).FindAllString(text, -1); len(labelled) < 50 {
		t.Errorf("only %d series carry the run's label", len(labelled))
	}

	// A disk run's exposition adds the fio metrics.
	port2 := freePort(t)
	code, _, errOut, _, _, diskNames := scrapeWhile(t, port2, "tierbench_fio_iops",
		"disk", "run", "--target", t.TempDir(), "--bs", "4k", "--rw", "randread", "--iodepth", "1", "--jobs", "1",
		"--duration", "1s", "--ramp", "0s", "--size", "16MiB", "--results", res,
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", port2), "--metrics-grace", "2s")
	if code != 0 {
		t.Fatalf("disk run: exit %d: %s", code, errOut)
	}

	t.Run("dashboard", func(t *testing.T) {
		exposed := map[string]bool{}
		for n := range tpccNames {
			exposed[n] = true
		}
		for n := range diskNames {
			exposed[n] = true
		}
		queried := dashboardMetrics(t, filepath.Join("..", "..", "contrib", "grafana", "tierbench.json"))
		if len(queried) < 15 {
			t.Fatalf("the dashboard queries only %d metrics: %v", len(queried), queried)
		}
		for _, q := range queried {
			switch {
			case exposed[q]:
			case os.Geteuid() != 0 && strings.HasPrefix(q, "tierbench_device_traced_"):
				// Block tracing, which the traced latencies come from,
				// needs root; CI runs as root and sees them.
				t.Logf("the dashboard queries %s, which a run exposes only as root", q)
			default:
				t.Errorf("the dashboard queries %s, which a real run does not expose", q)
			}
		}
	})
}

// dashboardMetrics returns the tierbench_ metrics the dashboard's panels
// and variables query.
func dashboardMetrics(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	set := map[string]bool{}
	for _, e := range exprs {
		for _, m := range regexp.MustCompile(`tierbench_\w+`).FindAllString(e, -1) {
			set[m] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Bad --metrics-listen values are bad input, named in one line.
func TestMetricsListenBadInput(t *testing.T) {
	for _, addr := range []string{":9464", "localhost", "127.0.0.1:99999"} {
		code, _, errOut := runTierbench(t, "tpcc", "run", "--dsn", "postgres://u@127.0.0.1:1/db", "--metrics-listen", addr)
		if code != 2 || !strings.HasPrefix(errOut, "tierbench: --metrics-listen ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("--metrics-listen %q: exit %d, %q; want exit 2 and one line about --metrics-listen", addr, code, errOut)
		}
	}
	code, _, errOut := runTierbench(t, "monitor", "--target", t.TempDir(), "--metrics-listen", "127.0.0.1:0", "--metrics-grace", "soon")
	if code != 2 || !strings.Contains(errOut, "--metrics-grace") {
		t.Errorf("--metrics-grace soon: exit %d, %q; want exit 2 naming the flag", code, errOut)
	}
}

// Thresholds through the command line: a run that meets them exits 0, one
// that breaches one exits 3 naming it (and stores the verdicts), and
// malformed ones exit 2 with every problem on its own line.
func TestThresholdsExitCodes(t *testing.T) {
	t.Parallel()
	dsn := tpcctest.Database(t, 1)
	res := t.TempDir()
	run := func(ts ...string) (int, string, string) {
		args := []string{"tpcc", "run", "--json", "--dsn", dsn, "--vus", "1", "--rampup", "1s", "--duration", "2s", "--results", res, "--interval", "0"}
		for _, x := range ts {
			args = append(args, "--threshold", x)
		}
		return runTierbench(t, args...)
	}
	code, out, errOut := run("nopm>=1", "errors==0", "new_order.p99<=60s")
	if code != 0 {
		t.Fatalf("thresholds met: exit %d: %s", code, errOut)
	}
	var doc struct {
		RunID      string `json:"run_id"`
		Thresholds []struct {
			Threshold string  `json:"threshold"`
			Key       string  `json:"key"`
			Value     float64 `json:"value"`
			Pass      bool    `json:"pass"`
		} `json:"thresholds"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Thresholds) != 3 {
		t.Fatalf("thresholds in --json: %v\n%s", err, out)
	}
	for _, v := range doc.Thresholds {
		if !v.Pass || v.Key == "" {
			t.Errorf("verdict %+v", v)
		}
	}

	code, out, errOut = run("nopm>=1", "nopm>=1000000000", "cpu_iowait<=100%")
	if code != 3 {
		t.Fatalf("a breach: exit %d; want 3: %s", code, errOut)
	}
	// --interval 0 samples no telemetry: cpu_iowait matched no step, and
	// fails with its note instead of passing silently.
	last := lastLine(errOut)
	if !strings.HasPrefix(last, "tierbench: run ") ||
		!strings.Contains(last, "breached 2 thresholds: nopm>=1000000000 at step 1 (1 VU): ") ||
		!strings.Contains(last, "; cpu_iowait<=100%: no step or point had cpu_iowait") {
		t.Errorf("the breach's line: %q", last)
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Thresholds) != 3 || doc.Thresholds[0].Pass == doc.Thresholds[1].Pass {
		t.Errorf("--json of a breached run: %v\n%s", err, out)
	}

	code, _, errOut = run("nopm>=10ms", "read.iops>=1", "nopm>=5")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 2 || len(lines) != 2 || !strings.Contains(lines[0], `"nopm>=10ms"`) || !strings.Contains(lines[1], `"read.iops>=1"`) {
		t.Errorf("malformed thresholds: exit %d, stderr:\n%s\nwant exit 2 and one line for each of the two bad ones", code, errOut)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
