package serve_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A headless Firefox driven over WebDriver BiDi (the W3C protocol Firefox
// serves itself with --remote-debugging-port; no geckodriver): enough of it
// for the console test, which evaluates expressions, navigates and takes
// screenshots.

// firefox finds the browser; CI may not skip without it.
func firefox(t *testing.T) string {
	return browserBinary(t, "Firefox", "firefox-esr", "firefox-esr", "firefox")
}

// bidiPage is one browsing context of a Firefox the test started.
type bidiPage struct {
	conn    *websocket.Conn
	ctx     context.Context
	context string // the browsing context's id

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan bidiReply
	logged  []string
}

type bidiReply struct {
	Type    string          `json:"type"` // success, error, event
	ID      int             `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Params  json.RawMessage `json:"params"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

var bidiListening = regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)

// openFirefox starts a headless Firefox with a fresh profile, opens a BiDi
// session and returns its first browsing context, 1200×900.
func openFirefox(t *testing.T, bin string) *bidiPage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	t.Cleanup(cancel)
	profile := t.TempDir()
	// No first-run pages, update checks or telemetry: nothing that could
	// reach for a network this machine does not have.
	prefs := strings.Join([]string{
		`user_pref("browser.shell.checkDefaultBrowser", false);`,
		`user_pref("browser.startup.homepage_override.mstone", "ignore");`,
		`user_pref("datareporting.policy.dataSubmissionEnabled", false);`,
		`user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);`,
		`user_pref("app.update.disabledForTesting", true);`,
		`user_pref("browser.safebrowsing.malware.enabled", false);`,
		`user_pref("browser.safebrowsing.phishing.enabled", false);`,
		`user_pref("network.captive-portal-service.enabled", false);`,
	}, "\n")
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(prefs+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-remote", "--profile", profile, "--remote-debugging-port", "0", "about:blank")
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1", "HOME="+profile)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := bidiListening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var endpoint string
	select {
	case endpoint = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not say where WebDriver BiDi listens within 60s", bin)
	}
	conn, _, err := websocket.Dial(ctx, endpoint+"/session", nil)
	if err != nil {
		t.Fatalf("connecting to Firefox's WebDriver BiDi at %s: %v", endpoint, err)
	}
	conn.SetReadLimit(64 << 20) // full-page screenshots
	t.Cleanup(func() { _ = conn.CloseNow() })
	p := &bidiPage{conn: conn, ctx: ctx, waiting: map[int]chan bidiReply{}}
	go p.read()

	if _, err := p.call("session.new", map[string]any{"capabilities": map[string]any{}}); err != nil {
		t.Fatalf("a WebDriver BiDi session: %v", err)
	}
	if _, err := p.call("session.subscribe", map[string]any{"events": []string{"log.entryAdded"}}); err != nil {
		t.Fatalf("subscribing to the page's log: %v", err)
	}
	raw, err := p.call("browsingContext.getTree", map[string]any{"maxDepth": 0})
	var tree struct{ Contexts []struct{ Context string } }
	if err == nil {
		err = json.Unmarshal(raw, &tree)
	}
	if err != nil || len(tree.Contexts) == 0 {
		t.Fatalf("Firefox's browsing contexts: %v %s", err, raw)
	}
	p.context = tree.Contexts[0].Context
	if _, err := p.call("browsingContext.setViewport", map[string]any{"context": p.context,
		"viewport": map[string]int{"width": 1200, "height": 900}}); err != nil {
		t.Fatalf("sizing Firefox's window: %v", err)
	}
	return p
}

// read hands each reply to its caller and records the page's errors.
func (p *bidiPage) read() {
	for {
		_, data, err := p.conn.Read(p.ctx)
		if err != nil {
			p.mu.Lock()
			for id, ch := range p.waiting {
				ch <- bidiReply{Type: "error", Error: "connection", Message: err.Error()}
				delete(p.waiting, id)
			}
			p.mu.Unlock()
			return
		}
		var r bidiReply
		if json.Unmarshal(data, &r) != nil {
			continue
		}
		if r.Type == "event" {
			p.event(r)
			continue
		}
		p.mu.Lock()
		ch := p.waiting[r.ID]
		delete(p.waiting, r.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

func (p *bidiPage) event(r bidiReply) {
	if r.Method != "log.entryAdded" {
		return
	}
	var e struct {
		Level, Text, Type string
		StackTrace        *struct {
			CallFrames []struct{ URL string }
		}
	}
	if json.Unmarshal(r.Params, &e) != nil || e.Level != "error" {
		return
	}
	p.mu.Lock()
	p.logged = append(p.logged, fmt.Sprintf("%s error: %s", e.Type, e.Text))
	p.mu.Unlock()
}

func (p *bidiPage) call(method string, params any) (json.RawMessage, error) {
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	ch := make(chan bidiReply, 1)
	p.waiting[id] = ch
	p.mu.Unlock()
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := p.conn.Write(p.ctx, websocket.MessageText, msg); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Type == "error" {
			return nil, fmt.Errorf("%s: %s: %s", method, r.Error, r.Message)
		}
		return r.Result, nil
	case <-p.ctx.Done():
		return nil, p.ctx.Err()
	}
}

func (p *bidiPage) navigate(url string) error {
	_, err := p.call("browsingContext.navigate", map[string]any{"context": p.context, "url": url, "wait": "complete"})
	return err
}

func (p *bidiPage) eval(expr string) (json.RawMessage, error) {
	raw, err := p.call("script.evaluate", map[string]any{
		"expression": expr, "target": map[string]string{"context": p.context}, "awaitPromise": false})
	if err != nil {
		return nil, err
	}
	var res struct {
		Type   string
		Result struct {
			Type  string
			Value json.RawMessage
		}
		ExceptionDetails struct{ Text string }
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	if res.Type == "exception" {
		return nil, errors.New("exception: " + res.ExceptionDetails.Text)
	}
	// The test's expressions give primitives, whose remote value is their
	// JSON.
	switch res.Result.Type {
	case "string", "number", "boolean":
		return res.Result.Value, nil
	case "null", "undefined":
		return json.RawMessage("null"), nil
	}
	return nil, fmt.Errorf("the expression gave a %s, not a primitive", res.Result.Type)
}

func (p *bidiPage) screenshot(path string) error {
	raw, err := p.call("browsingContext.captureScreenshot", map[string]any{"context": p.context, "origin": "document"})
	if err != nil {
		return err
	}
	var res struct{ Data string }
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil || len(png) == 0 {
		return fmt.Errorf("an empty or undecodable screenshot: %v", err)
	}
	return os.WriteFile(path, png, 0o644)
}

func (p *bidiPage) problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logged...)
}
