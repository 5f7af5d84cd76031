package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/remote"
)

func TestMain(m *testing.M) { clustertest.Main(m) }

// TestRemote runs commands on two hosts (network namespaces with a real
// sshd each) through the system's ssh, as a scenario's controller would.
func TestRemote(t *testing.T) {
	c := clustertest.New(t, 2, clustertest.Options{SSH: true})
	t.Setenv(remote.EnvSSHCommand, c.SSHCommand)
	hosts := make([]remote.Host, len(c.Hosts))
	for i, h := range c.Hosts {
		hosts[i] = remote.Host{Name: h.Name, SSH: h.SSH}
	}
	h1 := hosts[0]
	ctx := context.Background()

	t.Run("Shell runs on each host", func(t *testing.T) {
		for i, h := range hosts {
			out, err := h.Shell(ctx, nil, "ip -4 -o addr show dev eth0; printf %s "+remote.Quote("it's $HOME `x`"))
			if err != nil {
				t.Fatalf("%s: %v", h.Name, err)
			}
			if !strings.Contains(string(out), " "+c.Hosts[i].Addr+"/24 ") || !strings.HasSuffix(string(out), "it's $HOME `x`") {
				t.Errorf("%s printed %q", h.Name, out)
			}
		}
	})

	t.Run("stdin reaches the remote command and no command line", func(t *testing.T) {
		secret := fmt.Sprintf("pw-%d-%d", os.Getpid(), time.Now().UnixNano())
		big := bytes.Repeat([]byte("0123456789abcdef\x00\xff\n"), 1<<16) // 1.2 MiB, binary
		pr, pw := io.Pipe()
		found := make(chan string, 1)
		go func() {
			pw.Write([]byte(secret))
			// The remote cat has read the secret and waits for more: look
			// for it on every command line of this machine (the
			// controller's and the hosts', which share the process table).
			time.Sleep(300 * time.Millisecond)
			found <- processWith(secret)
			pw.Write(big)
			pw.Close()
		}()
		out, err := h1.Shell(ctx, pr, "cat")
		if err != nil {
			t.Fatal(err)
		}
		if want := append([]byte(secret), big...); !bytes.Equal(out, want) {
			t.Errorf("cat returned %d bytes, want %d", len(out), len(want))
		}
		if p := <-found; p != "" {
			t.Errorf("the secret is on a command line: %s", p)
		}
	})

	// The hosts are namespaces of this machine and share its clock: the
	// offset must be within its own bound (plus a little for scheduling),
	// and the bound a round trip over an open session, far below ssh's
	// start-up of tens of milliseconds.
	t.Run("ClockOffset of a host on the same clock", func(t *testing.T) {
		off, bound, err := h1.ClockOffset(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("offset %v, bound %v", off, bound)
		if bound <= 0 || bound > 20*time.Millisecond {
			t.Errorf("bound %v: not a round trip over an open session", bound)
		}
		if off < -bound-2*time.Millisecond || off > bound+2*time.Millisecond {
			t.Errorf("offset %v outside ±(%v + 2ms) on one clock", off, bound)
		}
		bad := remote.Host{Name: "nohost", SSH: "root@" + c.Hosts[0].Addr + ":1"}
		if _, _, err := bad.ClockOffset(ctx, 3); err == nil || !strings.Contains(err.Error(), "nohost") {
			t.Errorf("no sshd on port 1: %v", err)
		}
	})

	t.Run("tierbench version --json", func(t *testing.T) {
		h := h1
		h.Tierbench = clustertest.Tierbench(t)
		var v struct {
			Version string `json:"version"`
			Go      string `json:"go"`
		}
		if err := h.JSON(ctx, nil, &v, "version"); err != nil {
			t.Fatal(err)
		}
		if v.Version == "" || !strings.HasPrefix(v.Go, "go") {
			t.Errorf("version document %+v", v)
		}
		_, err := h.Run(ctx, nil, "version", "--bogus")
		var ee *remote.ExitError
		if !errors.As(err, &ee) || !ee.BadInput() || err.Error() != "h1 ("+h.SSH+"): tierbench: unknown flag: --bogus" {
			t.Errorf("bad flag: %v", err)
		}
	})

	t.Run("arguments arrive as given", func(t *testing.T) {
		h := h1
		h.Tierbench = script(t, "#!/bin/sh\nprintf '[%s]' \"$@\"\n")
		args := []string{"", "a b", "it's", "$HOME", "`id`", "*", "a\nb", "--dsn=x", "-n"}
		out, err := h.Run(ctx, nil, args...)
		want := ""
		for _, a := range args {
			want += "[" + a + "]"
		}
		if err != nil || string(out) != want {
			t.Errorf("got %q, %v; want %q", out, err, want)
		}
	})

	t.Run("a failing tierbench still fills JSON's document", func(t *testing.T) {
		h := h1
		h.Tierbench = script(t, "#!/bin/sh\necho progress >&2\necho '{\"breached\": true}'\necho 'tierbench: step 1 breached a threshold' >&2\nexit 3\n")
		var v struct{ Breached bool }
		err := h.JSON(ctx, nil, &v, "run")
		var ee *remote.ExitError
		if !errors.As(err, &ee) || !ee.Breached() || !v.Breached || !strings.HasSuffix(err.Error(), ": tierbench: step 1 breached a threshold") {
			t.Errorf("got %v, %+v", err, v)
		}
		h.Tierbench = script(t, "#!/bin/sh\necho 'not json'\n")
		if err := h.JSON(ctx, nil, &v, "run"); err == nil || !strings.Contains(err.Error(), "did not print one JSON document") {
			t.Errorf("not JSON: %v", err)
		}
	})

	t.Run("remote exit codes", func(t *testing.T) {
		_, err := h1.Shell(ctx, nil, "echo oops >&2; exit 3")
		var ee *remote.ExitError
		if !errors.As(err, &ee) || ee.Code != 3 || !strings.HasSuffix(err.Error(), ": the command exited 3: oops") {
			t.Errorf("exit 3: %v", err)
		}
		_, err = h1.Shell(ctx, nil, "exit 255")
		if !errors.As(err, &ee) || ee.Code != 255 {
			t.Errorf("a command's own exit 255: %v", err)
		}
	})

	t.Run("wrong key", func(t *testing.T) {
		t.Setenv(remote.EnvSSHCommand, c.WrongKeySSHCommand)
		_, err := h1.Shell(ctx, nil, "true")
		if !errors.Is(err, remote.ErrKeyRefused) || !oneLine(err) || !strings.Contains(err.Error(), "h1 (root@") ||
			!strings.Contains(err.Error(), "authorized_keys") {
			t.Errorf("got %v", err)
		}
	})

	t.Run("unknown host key", func(t *testing.T) {
		t.Setenv(remote.EnvSSHCommand, c.UnknownHostKeySSHCommand)
		before, _ := os.Stat(c.UnknownKnownHosts)
		_, err := h1.Run(ctx, nil, "version")
		if !errors.Is(err, remote.ErrHostKeyUnknown) || !oneLine(err) ||
			!strings.Contains(err.Error(), "ssh-keyscan -p 22 "+c.Hosts[0].Addr+" >> ~/.ssh/known_hosts") {
			t.Errorf("got %v", err)
		}
		after, _ := os.Stat(c.UnknownKnownHosts)
		if after.Size() != 0 || !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("ssh changed the known_hosts file (%d bytes)", after.Size())
		}
	})

	t.Run("changed host key", func(t *testing.T) {
		// known_hosts says h1's address has h2's key.
		kh, err := os.ReadFile(c.KnownHosts)
		if err != nil {
			t.Fatal(err)
		}
		var h2key string
		for _, l := range strings.Split(string(kh), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == c.Hosts[1].Addr {
				h2key = f[1] + " " + f[2]
			}
		}
		dir := t.TempDir()
		khFile := filepath.Join(dir, "known_hosts")
		cfg := filepath.Join(dir, "ssh_config")
		writeFile(t, khFile, c.Hosts[0].Addr+" "+h2key+"\n")
		writeFile(t, cfg, "IdentityFile "+c.ClientKey+"\nIdentitiesOnly yes\nUserKnownHostsFile "+khFile+"\nGlobalKnownHostsFile /dev/null\n")
		t.Setenv(remote.EnvSSHCommand, "ssh -F "+cfg)
		_, err = h1.Shell(ctx, nil, "true")
		if !errors.Is(err, remote.ErrHostKeyChanged) || !oneLine(err) || !strings.Contains(err.Error(), "ssh-keygen -R '"+c.Hosts[0].Addr+"'") {
			t.Errorf("got %v", err)
		}
		if b, _ := os.ReadFile(khFile); string(b) != c.Hosts[0].Addr+" "+h2key+"\n" {
			t.Errorf("ssh changed known_hosts: %q", b)
		}
	})

	t.Run("no tierbench", func(t *testing.T) {
		if out, err := h1.Shell(ctx, nil, "command -v tierbench || true"); err != nil || len(out) == 0 {
			_, err := h1.Run(ctx, nil, "version")
			if !errors.Is(err, remote.ErrNoTierbench) || err.Error() != "tierbench is not on h1 ("+h1.SSH+")'s PATH: install it there or give the host `tierbench: /path/to/tierbench`" {
				t.Errorf("not on PATH: %v", err)
			}
		} else {
			t.Logf("this machine has a tierbench on PATH (%s): the PATH case is not checked", bytes.TrimSpace(out))
		}
		h := h1
		h.Tierbench = "/nonexistent/tierbench"
		_, err := h.Run(ctx, nil, "version")
		if !errors.Is(err, remote.ErrNoTierbench) || !strings.Contains(err.Error(), "no tierbench at /nonexistent/tierbench") {
			t.Errorf("no such path: %v", err)
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		start := time.Now()
		_, err := remote.Host{Name: "gone", SSH: "root@" + c.UnusedAddr()}.Shell(ctx, nil, "true")
		if !errors.Is(err, remote.ErrUnreachable) || !oneLine(err) || !strings.Contains(err.Error(), "cannot reach "+c.UnusedAddr()+":22") {
			t.Errorf("no such host: %v", err)
		}
		if d := time.Since(start); d > 12*time.Second {
			t.Errorf("it took %v to find the host unreachable", d)
		}
		_, err = remote.Host{Name: "h1", SSH: "root@" + c.Hosts[0].Addr + ":2222"}.Shell(ctx, nil, "true")
		if !errors.Is(err, remote.ErrUnreachable) || !strings.Contains(err.Error(), "cannot reach "+c.Hosts[0].Addr+":2222: connection refused") {
			t.Errorf("no sshd on the port: %v", err)
		}
	})

	t.Run("cancel ends the remote command", func(t *testing.T) {
		marker := fmt.Sprintf("%d.%d", 600+os.Getpid()%1000, time.Now().UnixNano()%1000)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := h1.Shell(ctx, nil, "sleep "+marker)
			done <- err
		}()
		if !waitUntil(10*time.Second, func() bool { return remoteSleep(marker) != "" }) {
			t.Fatal("the remote sleep did not start")
		}
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "h1 (") {
				t.Errorf("cancelled: %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Shell returned %v after the cancel", d)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Shell did not return after the cancel")
		}
		if !waitUntil(5*time.Second, func() bool { return processWith(marker) == "" }) {
			t.Fatalf("a process is left 5s after the cancel: %s", processWith(marker))
		}
	})
}

// script writes an executable sh script for the hosts (they share the file
// system) and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tierbench")
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func oneLine(err error) bool { return err != nil && !strings.ContainsAny(err.Error(), "\r\n") }

// processWith is "PID: command line" of a process whose command line holds
// s, or "".
func processWith(s string) string {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) {
			return e.Name() + ": " + string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
	return ""
}

// remoteSleep is the `sleep MARKER` process, or "".
func remoteSleep(marker string) string {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == "sleep\x00"+marker+"\x00" {
			return e.Name()
		}
	}
	return ""
}

func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
