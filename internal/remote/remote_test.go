package remote

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

func TestParseSSH(t *testing.T) {
	ok := []struct {
		in   string
		want Dest
	}{
		{"10.0.0.5", Dest{Addr: "10.0.0.5"}},
		{"10.0.0.5:2222", Dest{Addr: "10.0.0.5", Port: 2222}},
		{"root@10.0.0.5", Dest{User: "root", Addr: "10.0.0.5"}},
		{"bench_user@db-1.example.com:22", Dest{User: "bench_user", Addr: "db-1.example.com", Port: 22}},
		{"db1", Dest{Addr: "db1"}},
		{"[::1]", Dest{Addr: "::1"}},
		{"user@[::1]:22", Dest{User: "user", Addr: "::1", Port: 22}},
		{"[fe80::1%eth0]:65535", Dest{Addr: "fe80::1%eth0", Port: 65535}},
		{"[::ffff:10.0.0.1]:1", Dest{Addr: "::ffff:10.0.0.1", Port: 1}},
	}
	for _, c := range ok {
		got, err := ParseSSH(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSSH(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		if back, err := ParseSSH(got.String()); err != nil || back != got {
			t.Errorf("ParseSSH(%q).String() = %q, which parses to %+v, %v", c.in, got.String(), back, err)
		}
	}
	bad := []struct{ in, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{"a@b:x", `ssh "a@b:x": port x is not a number; give user@addr[:port]`},
		{"h:0", "port 0 is out of range 1-65535"},
		{"h:65536", "port 65536 is out of range 1-65535"},
		{"h:99999999999999999999", "out of range"},
		{"h:-1", "port -1 is not a number"},
		{"h:", "the port after : is empty"},
		{"@h", "the user before @ is empty"},
		{"a@b@c", "more than one @"},
		{"::1", "an IPv6 address goes in brackets"},
		{"root@fe80::1:22", "an IPv6 address goes in brackets"},
		{"[::1", "is not closed"},
		{"[::1]x", `"x" after the IPv6 address`},
		{"[::1]:", "the port after : is empty"},
		{"[]", "the address in brackets is empty"},
		{"[10.0.0.1]", "brackets are for IPv6 addresses only"},
		{"-oProxyCommand=touch", "starts with -"},
		{"u@-h", "starts with -"},
		{"-u@h", "starts with -"},
		{"db 1", `has ' '`},
		{"h;rm", `has ';'`},
		{"us er@h", `user "us er" has ' '`},
		{"u@", "the address is empty"},
		{":22", "the address is empty"},
	}
	for _, c := range bad {
		_, err := ParseSSH(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSSH(%q) = %v; want an error with %q", c.in, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") || !strings.HasSuffix(err.Error(), sshSyntax) {
			t.Errorf("ParseSSH(%q): %q is not one line ending with the right syntax", c.in, err)
		}
	}
}

var quoteCases = []string{
	"", "a", "tierbench", "--dsn=x", "/usr/local/bin/tierbench", "a b", "'", "it's", `"`, "$HOME", "${HOME}",
	"`id`", "$(id)", `\`, `\'`, "\n", "a\nb", "\t", "*", "?", "[a]", "~", "~root", "=x", "a=b", "-n", "%s",
	"!", "!!", "#", "a#b", ";", "&", "|", "<", ">", "(", ")", "{a,b}", "ünïcødé", "''", "'''", " ", "a'b'c",
	"\x01\x7f",
}

// TestQuote runs each quoted word through a real sh.
func TestQuote(t *testing.T) {
	for _, s := range quoteCases {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh -c 'printf %%s %s' = %q, %v; want %q", Quote(s), out, err, s)
		}
		if unquoted, ok := unquote(Quote(s)); !ok || unquoted != s {
			t.Errorf("unquote(Quote(%q)) = %q, %v", s, unquoted, ok)
		}
	}
	for _, plain := range []string{"tierbench", "--json", "a=b", "/x/y.z", "u@h:22", "10%,+"} {
		if Quote(plain) != plain {
			t.Errorf("Quote(%q) = %q; it needs no quotes", plain, Quote(plain))
		}
	}
}

// TestRemoteCommand runs the command line sshd would hand the login shell
// through a real sh here: the words arrive intact, stdin reaches the
// command, and its exit status comes back.
func TestRemoteCommand(t *testing.T) {
	// The wrapper signals its process group when its parent goes: its own
	// group here, as sshd's session would be, never the test's.
	wrapped := func(argv []string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", remoteCommand(argv))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	cmd := wrapped(append([]string{"printf", "[%s]"}, quoteCases...))
	out, err := cmd.Output()
	want := ""
	for _, s := range quoteCases {
		want += "[" + s + "]"
	}
	if err != nil || string(out) != want {
		t.Fatalf("%q = %q, %v; want %q", cmd.Args, out, err, want)
	}

	cmd = wrapped([]string{"cat"})
	cmd.Stdin = strings.NewReader("secret on stdin\n")
	if out, err := cmd.Output(); err != nil || string(out) != "secret on stdin\n" {
		t.Errorf("cat through the wrapper = %q, %v", out, err)
	}

	for _, c := range []struct {
		argv []string
		code int
	}{
		{[]string{"sh", "-c", "exit 3"}, 3},
		{[]string{"sh", "-c", "exit 255"}, 255},
		{[]string{"no-such-command-tierbench-test"}, 127},
	} {
		err := wrapped(c.argv).Run()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != c.code {
			t.Errorf("%v through the wrapper: %v; want exit %d", c.argv, err, c.code)
		}
	}
}

func TestSSHArgv(t *testing.T) {
	t.Setenv(EnvSSHCommand, "")
	if got := SSHCommand(); !slices.Equal(got, []string{"ssh"}) {
		t.Errorf("SSHCommand() = %q with the variable empty", got)
	}
	t.Setenv(EnvSSHCommand, "  /usr/bin/ssh  -F /tmp/cfg   -o ConnectTimeout=2 ")
	if got := SSHCommand(); !slices.Equal(got, []string{"/usr/bin/ssh", "-F", "/tmp/cfg", "-o", "ConnectTimeout=2"}) {
		t.Errorf("SSHCommand() = %q", got)
	}

	h := Host{Name: "db1", SSH: "bench@[::1]:2222", Tierbench: "/opt/tb/tierbench"}
	cmd := h.Command(context.Background(), "disk", "run", "--target", "/mnt/a b")
	if cmd.Err != nil {
		t.Fatal(cmd.Err)
	}
	want := []string{"/usr/bin/ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-F", "/tmp/cfg", "-o", "ConnectTimeout=2",
		"-T", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3",
		"-p", "2222", "-l", "bench", "--", "::1",
		remoteCommand([]string{"/opt/tb/tierbench", "disk", "run", "--target", "/mnt/a b"})}
	if !slices.Equal(cmd.Args, want) {
		t.Errorf("argv\n got %q\nwant %q", cmd.Args, want)
	}
	if !strings.HasSuffix(cmd.Args[len(cmd.Args)-1], " /opt/tb/tierbench disk run --target '/mnt/a b'") {
		t.Errorf("remote command %q", cmd.Args[len(cmd.Args)-1])
	}
	for _, a := range cmd.Args {
		if strings.Contains(a, "StrictHostKeyChecking=no") || strings.Contains(a, "accept-new") {
			t.Errorf("argv turns host-key checking off: %q", cmd.Args)
		}
	}

	t.Setenv(EnvSSHCommand, "")
	cmd = Host{SSH: "10.0.0.5"}.Command(context.Background(), "version")
	if n := len(cmd.Args); cmd.Args[0] != "ssh" || cmd.Args[n-2] != "10.0.0.5" || slices.Contains(cmd.Args, "-p") || slices.Contains(cmd.Args, "-l") {
		t.Errorf("argv without user and port: %q", cmd.Args)
	}
	if !strings.HasSuffix(cmd.Args[len(cmd.Args)-1], " tierbench version") {
		t.Errorf("remote command without a tierbench path: %q", cmd.Args[len(cmd.Args)-1])
	}

	cmd = Host{Name: "db1", SSH: "a@b:x"}.Command(context.Background(), "version")
	if cmd.Err == nil || !strings.Contains(cmd.Err.Error(), "port x is not a number") || cmd.Run() == nil {
		t.Errorf("a bad destination: Err %v", cmd.Err)
	}
}

func TestWithJSONFlag(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, []string{"--json"}},
		{[]string{"version"}, []string{"version", "--json"}},
		{[]string{"version", "--json"}, []string{"version", "--json"}},
		{[]string{"scenario", "run", "--", "a.yaml"}, []string{"scenario", "run", "--json", "--", "a.yaml"}},
	} {
		if got := withJSONFlag(c.in); !slices.Equal(got, c.want) {
			t.Errorf("withJSONFlag(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// exitErr is a real *exec.ExitError with the given status.
func exitErr(t *testing.T, code int) error {
	t.Helper()
	err := exec.Command("sh", "-c", "exit "+itoa(code)).Run()
	if err == nil {
		t.Fatalf("sh exit %d succeeded", code)
	}
	return err
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestClassify(t *testing.T) {
	h := Host{Name: "db1", SSH: "bench@10.0.0.5:2222"}
	label := "db1 (bench@10.0.0.5:2222)"
	cases := []struct {
		name      string
		code      int
		stderr    string
		tierbench string
		shell     bool
		kind      error // a sentinel, or nil for an *ExitError
		want      []string
	}{
		{name: "key refused", code: 255, stderr: "bench@10.0.0.5: Permission denied (publickey).\r\n",
			kind: ErrKeyRefused, want: []string{label, "refused the key", "authorized_keys", "IdentityFile"}},
		{name: "unknown host key", code: 255, stderr: "No ED25519 host key is known for [10.0.0.5]:2222 and you have requested strict checking.\r\nHost key verification failed.\r\n",
			kind: ErrHostKeyUnknown, want: []string{label, "not in known_hosts", "never accepts", "ssh-keyscan -p 2222 10.0.0.5 >> ~/.ssh/known_hosts"}},
		{name: "changed host key", code: 255, stderr: "@@@@@@@@@@@\r\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\r\n@@@@@@@\r\nIT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\r\nHost key for [10.0.0.5]:2222 has changed and you have requested strict checking.\r\nHost key verification failed.\r\n",
			kind: ErrHostKeyChanged, want: []string{label, "not the one in known_hosts", "ssh-keygen -R '[10.0.0.5]:2222'"}},
		{name: "refused", code: 255, stderr: "ssh: connect to host 10.0.0.5 port 2222: Connection refused\r\n",
			kind: ErrUnreachable, want: []string{label, "cannot reach 10.0.0.5:2222: connection refused"}},
		{name: "timed out", code: 255, stderr: "ssh: connect to host 10.0.0.5 port 2222: Connection timed out\r\n",
			kind: ErrUnreachable, want: []string{"cannot reach 10.0.0.5:2222: connection timed out"}},
		{name: "no route", code: 255, stderr: "ssh: connect to host 10.0.0.5 port 2222: No route to host\r\n",
			kind: ErrUnreachable, want: []string{"cannot reach 10.0.0.5:2222: no route to host"}},
		{name: "unresolved", code: 255, stderr: "ssh: Could not resolve hostname db1.invalid: Name or service not known\r\n",
			kind: ErrUnreachable, want: []string{"cannot resolve 10.0.0.5"}},
		{name: "closed", code: 255, stderr: "kex_exchange_identification: Connection closed by remote host\r\nConnection closed by 10.0.0.5 port 2222\r\n",
			kind: ErrUnreachable, want: []string{"closed the connection before login"}},
		{name: "other ssh failure", code: 255, stderr: "ssh: some new failure\r\n",
			kind: ErrSSH, want: []string{label + ": ssh: some new failure"}},
		{name: "tierbench not on PATH", code: 127, stderr: "sh: 1: tierbench: not found\n",
			kind: ErrNoTierbench, want: []string{"tierbench is not on " + label + "'s PATH: install it there or give the host `tierbench: /path/to/tierbench`"}},
		{name: "no tierbench at the path", code: 127, stderr: "sh: 1: /opt/tierbench: not found\n", tierbench: "/opt/tierbench",
			kind: ErrNoTierbench, want: []string{label, "no tierbench at /opt/tierbench"}},
		{name: "tierbench not executable", code: 126, stderr: "sh: 1: /opt/tierbench: Permission denied\n", tierbench: "/opt/tierbench",
			kind: ErrNoTierbench, want: []string{"/opt/tierbench cannot be run there"}},
		{name: "tierbench bad input", code: 2, stderr: "progress\ntierbench: unknown flag: --bogus\n",
			want: []string{label + ": tierbench: unknown flag: --bogus"}},
		{name: "tierbench breached", code: 3, stderr: "tierbench: step 1 breached p99 < 10ms\n",
			want: []string{label + ": tierbench: step 1 breached p99 < 10ms"}},
		{name: "tierbench silent failure", code: 1, stderr: "check failed: 3 rows\n",
			want: []string{label + ": tierbench exited 1: check failed: 3 rows"}},
		{name: "remote command exits 255", code: 255, stderr: "it is my own 255\n", shell: true,
			want: []string{label + ": the command exited 255: it is my own 255"}},
		{name: "shell 127 is not about tierbench", code: 127, stderr: "sh: 1: foo: not found\n", shell: true,
			want: []string{"the command exited 127: sh: 1: foo: not found"}},
		{name: "shell with a Permission denied", code: 1, stderr: "cat: /x: Permission denied\n", shell: true,
			want: []string{"the command exited 1: cat: /x: Permission denied"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hh := h
			hh.Tierbench = c.tierbench
			err := hh.classify(exitErr(t, c.code), c.stderr, !c.shell)
			if err == nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %q; want one line", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q\nlacks %q", err, w)
				}
			}
			var ee *ExitError
			var se *SSHError
			if c.kind != nil {
				if !errors.Is(err, c.kind) || !errors.As(err, &se) || errors.As(err, &ee) {
					t.Errorf("%q is not an *SSHError of %v", err, c.kind)
				}
			} else if !errors.As(err, &ee) || ee.Code != c.code {
				t.Errorf("%q is not an *ExitError with code %d", err, c.code)
			}
		})
	}

	err := Host{Name: "h", SSH: "h"}.classify(&exec.Error{Name: "ssh", Err: exec.ErrNotFound}, "", true)
	if !errors.Is(err, ErrNoSSHClient) || !strings.Contains(err.Error(), "openssh-client") {
		t.Errorf("no ssh client: %v", err)
	}
	var ee *ExitError
	if errors.As(Host{SSH: "h"}.classify(exitErr(t, 2), "tierbench: x\n", true), &ee) && !ee.BadInput() {
		t.Errorf("exit 2 is not BadInput")
	}
	if errors.As(Host{SSH: "h"}.classify(exitErr(t, 3), "", true), &ee) && !ee.Breached() {
		t.Errorf("exit 3 is not Breached")
	}
}

func TestLabel(t *testing.T) {
	for _, c := range []struct {
		h    Host
		want string
	}{
		{Host{Name: "db1", SSH: "root@10.0.0.5"}, "db1 (root@10.0.0.5)"},
		{Host{SSH: "root@10.0.0.5"}, "root@10.0.0.5"},
		{Host{Name: "db1", SSH: "db1"}, "db1"},
	} {
		if got := c.h.label(); got != c.want {
			t.Errorf("%+v: label %q, want %q", c.h, got, c.want)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 8}
	b.Write([]byte("0123456"))
	b.Write([]byte("789abc"))
	if b.String() != "56789abc" {
		t.Errorf("tail %q", b.String())
	}
}

// TestWatchdog: when the wrapper's parent (sshd's session, here a shell that
// exits) goes away, the command and its children get SIGTERM within about a
// second.
func TestWatchdog(t *testing.T) {
	marker := "7" + itoa(os.Getpid()%100000) + ".5"
	// The parent starts the wrapper, which runs sh, which runs sleep; then
	// the parent exits.
	parent := exec.Command("sh", "-c", `sh -c "$1" sh sh -c "sleep $2; echo survived" & sleep 0.3`, "sh", remoteCommand([]string{"sh", "-c", `sleep "$0"; :`, marker}), marker)
	parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := parent.Run(); err != nil {
		t.Fatal(err)
	}
	sleeping := func() bool {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == "sleep\x00"+marker+"\x00" {
				return true
			}
		}
		return false
	}
	if !sleeping() {
		t.Fatal("the command did not start")
	}
	deadline := time.Now().Add(4 * time.Second)
	for sleeping() {
		if time.Now().After(deadline) {
			t.Fatal("the command still runs 4s after the wrapper's parent exited")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNoSSHClient: a client that is not there is said so (nothing is run).
func TestNoSSHClient(t *testing.T) {
	for _, client := range []string{"/nonexistent/ssh", "no-such-ssh-client-tierbench"} {
		t.Setenv(EnvSSHCommand, client+" -F /dev/null")
		_, err := Host{Name: "db1", SSH: "10.0.0.5"}.Shell(context.Background(), nil, "true")
		if !errors.Is(err, ErrNoSSHClient) || !strings.Contains(err.Error(), EnvSSHCommand) {
			t.Errorf("%s: %v", client, err)
		}
	}
}

// What `ssh -G` says decides where the reachability check dials.
func TestEndpointOf(t *testing.T) {
	d := Dest{User: "u", Addr: "db1"}
	for _, c := range []struct {
		name, out, want string
		ok              bool
	}{
		{"config's hostname and port", "user u\nhostname 10.0.0.11\nport 2222\nproxyjump none\n", "10.0.0.11:2222", true},
		{"nothing said: port 22", "", "db1:22", true},
		{"IPv6", "hostname fd00::2\nport 22\n", "[fd00::2]:22", true},
		{"a jump host", "hostname 10.0.0.11\nport 22\nproxyjump bastion\n", "", false},
		{"a proxy command", "hostname 10.0.0.11\nproxycommand nc %h %p\n", "", false},
	} {
		got, ok := endpointOf(c.out, d)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if got, _ := endpointOf("", Dest{Addr: "h", Port: 2200}); got != "h:2200" {
		t.Errorf("a given port: %q", got)
	}
}

// The real client resolves a destination without connecting.
func TestEndpointRealSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		testenv.SkipOrFail(t, "no ssh client; scripts/setup.sh --test installs openssh-client")
	}
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("Host lab1\n  HostName 127.0.0.9\n  Port 2202\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvSSHCommand, "ssh -F "+cfg)
	if got, ok := (Dest{Addr: "lab1"}).Endpoint(context.Background()); got != "127.0.0.9:2202" || !ok {
		t.Errorf("lab1 through the config: %q, %v", got, ok)
	}
	if got, ok := (Dest{Addr: "127.0.0.8", Port: 2300}).Endpoint(context.Background()); got != "127.0.0.8:2300" || !ok {
		t.Errorf("a plain address with a port: %q, %v", got, ok)
	}
}
