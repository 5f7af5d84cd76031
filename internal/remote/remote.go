// Package remote runs tierbench on other hosts through the system's OpenSSH
// client.
//
// What runs where: the controller (the host where a scenario runs) starts,
// for each step on another host, `ssh HOST tierbench <verb> … --json`. The
// host runs that verb on its own disks and servers, exactly as it would if a
// person typed it there, and prints the one JSON document of its --json
// mode on stdout, which ssh carries back to the controller. tierbench's
// command-line contract (its verbs, --json documents and exit codes: 0 ok,
// 1 failure, 2 bad input, 3 a breached threshold) is the only protocol:
// nothing of tierbench listens on a port, and the host needs nothing but
// sshd and a tierbench binary.
//
// Why OpenSSH and not a protocol of tierbench's own: the hosts already run
// sshd, and their administrators already decided who may log in and how
// (authorized_keys, agents, certificates, jump hosts, ~/.ssh/config).
// Reusing it means no new daemon, port, firewall rule or credential store,
// and encryption, host authentication and auditing that are not ours to get
// wrong. tierbench runs the system's `ssh` (TIERBENCH_SSH_COMMAND replaces
// it, like GIT_SSH_COMMAND), always in batch mode (it never prompts) and
// with strict host-key checking: an unknown or changed host key is an error
// that says how to check and add the key, never a silent accept.
//
// Secrets (passwords, DSNs) travel only on stdin and stdout, never on a
// command line, where `ps` on either host would show them: pass them in
// Run's, JSON's or Shell's stdin, never in args.
//
// The remote command runs under a small POSIX sh wrapper: sshd does not
// signal a command that has no terminal when the connection drops, so
// without it a cancelled run would go on on the host. The wrapper starts the
// command, watches the sshd process it was started from and, within about a
// second of that process going away (the controller killed ssh because its
// context was cancelled, or the connection was lost), sends SIGTERM to the
// session's process group: the command and everything it started, as a
// terminal's hangup would. SIGTERM is tierbench's graceful stop. The host
// user's login shell must parse POSIX sh words (sh, bash, dash, ksh, zsh):
// the command line is quoted for it with Quote.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// EnvSSHCommand names the variable that replaces `ssh`: its words, split on
// spaces (no shell), are the client and its first arguments, e.g.
// "ssh -F /path/ssh_config".
const EnvSSHCommand = "TIERBENCH_SSH_COMMAND"

// Host is one host that tierbench runs on over ssh.
type Host struct {
	Name      string // the scenario's name for it
	SSH       string // "user@addr[:port]" or "addr[:port]" (IPv6 in brackets: user@[::1]:22)
	Tierbench string // tierbench's path on the host; "" = "tierbench" from the remote PATH
}

// Dest is a parsed ssh destination. User "" and Port 0 leave them to ssh
// (~/.ssh/config, then the local user name and port 22).
type Dest struct {
	User, Addr string
	Port       int
}

// String gives the destination back in ParseSSH's syntax.
func (d Dest) String() string {
	s := d.Addr
	if strings.Contains(s, ":") {
		s = "[" + s + "]"
	}
	if d.User != "" {
		s = d.User + "@" + s
	}
	if d.Port != 0 {
		s += ":" + strconv.Itoa(d.Port)
	}
	return s
}

// hostPort is "addr:port" (port 22 when unset), as error messages name it.
func (d Dest) hostPort() string {
	port := d.Port
	if port == 0 {
		port = 22
	}
	a := d.Addr
	if strings.Contains(a, ":") {
		a = "[" + a + "]"
	}
	return a + ":" + strconv.Itoa(port)
}

// knownHostsName is how known_hosts names the destination: the bare address
// on port 22, "[addr]:port" on any other.
func (d Dest) knownHostsName() string {
	if d.Port == 0 || d.Port == 22 {
		return d.Addr
	}
	return "[" + d.Addr + "]:" + strconv.Itoa(d.Port)
}

const sshSyntax = "give user@addr[:port], addr[:port] or user@[ipv6]:port"

// ParseSSH parses a host's ssh destination: "addr", "addr:port",
// "user@addr", "user@addr:port", with an IPv6 address in brackets
// ("[::1]:2222"). addr is an IP address, a host name or a Host alias of
// ~/.ssh/config. Errors are one line saying what is wrong and what is right.
func ParseSSH(s string) (Dest, error) {
	bad := func(format string, args ...any) (Dest, error) {
		return Dest{}, fmt.Errorf("ssh %q: %s; %s", s, fmt.Sprintf(format, args...), sshSyntax)
	}
	if strings.TrimSpace(s) == "" {
		return bad("empty")
	}
	var d Dest
	rest := s
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		d.User, rest = rest[:i], rest[i+1:]
		switch {
		case d.User == "":
			return bad("the user before @ is empty")
		case strings.IndexByte(rest, '@') >= 0:
			return bad("more than one @")
		case d.User[0] == '-':
			return bad("user %q starts with -", d.User)
		}
		for _, r := range d.User {
			if !isWordRune(r) {
				return bad("user %q has %q, which is not a letter, digit, '.', '_' or '-'", d.User, r)
			}
		}
	}
	port := ""
	hasPort := false
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return bad("the [ of the IPv6 address is not closed")
		}
		d.Addr, rest = rest[1:end], rest[end+1:]
		if d.Addr == "" {
			return bad("the address in brackets is empty")
		}
		if !strings.Contains(d.Addr, ":") {
			return bad("brackets are for IPv6 addresses only, and %q is not one", d.Addr)
		}
		for _, r := range d.Addr {
			if !isIPv6Rune(r) {
				return bad("IPv6 address %q has %q", d.Addr, r)
			}
		}
		switch {
		case rest == "":
		case rest[0] == ':':
			port, hasPort = rest[1:], true
		default:
			return bad("%q after the IPv6 address, where only :port may follow", rest)
		}
	} else {
		switch n := strings.Count(rest, ":"); {
		case n > 1:
			return bad("an IPv6 address goes in brackets ([%s], or [addr]:port)", rest)
		case n == 1:
			i := strings.IndexByte(rest, ':')
			rest, port, hasPort = rest[:i], rest[i+1:], true
		}
		d.Addr = rest
		switch {
		case d.Addr == "":
			return bad("the address is empty")
		case d.Addr[0] == '-':
			return bad("address %q starts with -", d.Addr)
		}
		for _, r := range d.Addr {
			if !isWordRune(r) {
				return bad("address %q has %q, which is not a letter, digit, '.', '_' or '-'", d.Addr, r)
			}
		}
	}
	if hasPort {
		if port == "" {
			return bad("the port after : is empty")
		}
		for _, r := range port {
			if r < '0' || r > '9' {
				return bad("port %s is not a number", port)
			}
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return bad("port %s is out of range 1-65535", port)
		}
		d.Port = n
	}
	return d, nil
}

func isWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// isIPv6Rune allows hex digits, ':' and '.' (an embedded IPv4 address), and
// a zone after '%' (fe80::1%eth0).
func isIPv6Rune(r rune) bool { return isWordRune(r) || r == ':' || r == '%' }

// Quote quotes s as one word of a POSIX shell command line: unchanged when it
// is made only of characters no shell treats specially, otherwise in single
// quotes, where each single quote of s closes the quoted part, is written as
// \' and opens a new one.
func Quote(s string) string {
	if s != "" && isPlainWord(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isPlainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_@%+:,./-", c) >= 0:
		case c == '=' && i > 0: // zsh expands a leading =word to a path
		default:
			return false
		}
	}
	return true
}

// SSHCommand is the ssh client and its first arguments: $TIERBENCH_SSH_COMMAND
// split on spaces (like GIT_SSH_COMMAND, but without a shell), by default
// just "ssh".
func SSHCommand() []string {
	if f := strings.Fields(os.Getenv(EnvSSHCommand)); len(f) > 0 {
		return f
	}
	return []string{"ssh"}
}

// forcedOptions come right after the client's name, before the words of
// TIERBENCH_SSH_COMMAND and ~/.ssh/config, so nothing can turn them off (ssh
// keeps an option's first value): never a prompt, never an unchecked host key.
var forcedOptions = []string{"-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"}

// defaultOptions come after TIERBENCH_SSH_COMMAND's words, which may set them
// otherwise. -T: no terminal, whatever RequestTTY says, so stdin and stdout
// carry bytes unchanged and stderr stays apart.
var defaultOptions = []string{"-T", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"}

// sshArgv is the ssh command line that runs the POSIX command line remote on d.
func sshArgv(d Dest, remote string) []string {
	base := SSHCommand()
	argv := append([]string{base[0]}, forcedOptions...)
	argv = append(argv, base[1:]...)
	argv = append(argv, defaultOptions...)
	if d.Port != 0 {
		argv = append(argv, "-p", strconv.Itoa(d.Port))
	}
	if d.User != "" {
		argv = append(argv, "-l", d.User)
	}
	return append(argv, "--", d.Addr, remote)
}

// watchdog is the remote wrapper (see the package comment): it runs "$@" with
// the session's stdin and, once the sshd process that started the wrapper is
// gone, sends SIGTERM to its process group (kill 0): sshd made the session
// (setsid), so that is the command, its children and the wrapper, and
// nothing else. The shell's asynchronous list would get /dev/null as stdin
// without the explicit <&3; the watcher's own descriptors go to /dev/null so
// that sshd does not wait for it to close the session.
const watchdog = `p=$PPID
exec 3<&0
"$@" <&3 3<&- &
c=$!
exec 3<&-
(while kill -0 "$p" 2>/dev/null; do sleep 1; done; kill -TERM 0) </dev/null >/dev/null 2>&1 &
w=$!
wait "$c"
r=$?
kill "$w" 2>/dev/null
exit "$r"`

// remoteCommand is the command line that sshd hands the user's login shell:
// exec (so the wrapper's parent is sshd itself) sh -c WRAPPER sh ARGV….
func remoteCommand(argv []string) string {
	var b strings.Builder
	b.WriteString("exec sh -c ")
	b.WriteString(Quote(watchdog))
	b.WriteString(" sh")
	for _, a := range argv {
		b.WriteByte(' ')
		b.WriteString(Quote(a))
	}
	return b.String()
}

// waitDelay bounds how long Wait waits for ssh's pipes once ssh has exited
// or been killed (a caller's stdin that never ends, a ProxyCommand that
// lingers).
const waitDelay = 3 * time.Second

func (h Host) tierbench() string {
	if h.Tierbench == "" {
		return "tierbench"
	}
	return h.Tierbench
}

// label names the host in errors: "db1 (root@10.0.0.5)".
func (h Host) label() string {
	switch {
	case h.Name == "":
		return h.SSH
	case h.SSH == "" || h.SSH == h.Name:
		return h.Name
	}
	return h.Name + " (" + h.SSH + ")"
}

// Command is the ssh command that runs `tierbench args…` on h; the caller
// sets its Stdin, Stdout and Stderr, and Classify turns its failure into an
// error that says what to fix. Cancelling ctx kills ssh (and so ends the
// remote command, see the package comment). A bad h.SSH is the Cmd's Err,
// which Start returns.
func (h Host) Command(ctx context.Context, args ...string) *exec.Cmd {
	return h.command(ctx, append([]string{h.tierbench()}, args...))
}

func (h Host) command(ctx context.Context, argv []string) *exec.Cmd {
	d, perr := ParseSSH(h.SSH)
	cmd := exec.CommandContext(ctx, SSHCommand()[0])
	cmd.Args = sshArgv(d, remoteCommand(argv))
	if perr != nil {
		cmd.Err = fmt.Errorf("host %s: %w", h.label(), perr)
	}
	ownProcessGroup(cmd)
	cmd.WaitDelay = waitDelay
	return cmd
}

// Run runs `tierbench args…` on h with stdin (nil: none) and returns its
// stdout. Errors are classified (see Classify); a failure of tierbench
// itself is an *ExitError. Never put a secret in args: pass it on stdin.
func (h Host) Run(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	return h.run(ctx, stdin, true, append([]string{h.tierbench()}, args...))
}

// JSON runs `tierbench args… --json` on h and decodes the one JSON document
// it prints into v. JSON adds --json itself (before a "--", if any), so
// callers do not pass it. A tierbench that fails (an *ExitError) but still
// printed its document, as a run that breached a threshold (exit 3) does,
// fills v and returns the error.
func (h Host) JSON(ctx context.Context, stdin io.Reader, v any, args ...string) error {
	args = withJSONFlag(args)
	out, err := h.Run(ctx, stdin, args...)
	var ee *ExitError
	if err != nil && !(errors.As(err, &ee) && len(bytes.TrimSpace(out)) > 0) {
		return err
	}
	if derr := decodeOne(out, v); derr != nil {
		if err != nil {
			return err
		}
		return fmt.Errorf("%s: `tierbench %s` did not print one JSON document: %v", h.label(), strings.Join(args, " "), derr)
	}
	return err
}

func withJSONFlag(args []string) []string {
	for i, a := range args {
		if a == "--json" {
			return args
		}
		if a == "--" {
			out := append(append(append([]string{}, args[:i]...), "--json"), args[i:]...)
			return out
		}
	}
	return append(append([]string{}, args...), "--json")
}

// decodeOne decodes data, which must be exactly one JSON value.
func decodeOne(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return errors.New("the output is empty")
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more follows the document")
	}
	return nil
}

// Shell runs script, a POSIX sh command line, on h (as `sh -c script`) with
// stdin and returns its stdout: for `test -d DIR`, `rm -f FILE`, reading a
// file back. Quote every word that comes from data. A non-zero exit is an
// *ExitError whose Msg is the script's last line on stderr.
func (h Host) Shell(ctx context.Context, stdin io.Reader, script string) ([]byte, error) {
	return h.run(ctx, stdin, false, []string{"sh", "-c", script})
}

func (h Host) run(ctx context.Context, stdin io.Reader, isTierbench bool, argv []string) ([]byte, error) {
	cmd := h.command(ctx, argv)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, stderr
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		// ssh finished; only the copy of a never-ending stdin was cut short.
		err = nil
	}
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		return stdout.Bytes(), fmt.Errorf("%s: stopped: %w", h.label(), context.Cause(ctx))
	}
	return stdout.Bytes(), h.classify(err, stderr.String(), isTierbench)
}

// tailBuffer keeps the last max bytes written to it: what classifying a
// failure needs of a long run's stderr.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string { return string(b.buf) }

// Endpoint is the "addr:port" ssh would connect to for d, as ssh itself
// resolves it (`ssh -G`: ~/.ssh/config's HostName and Port, and
// TIERBENCH_SSH_COMMAND's options), so a check that the address answers
// dials what ssh will. ok is false when ssh does not connect there itself
// (a ProxyJump or ProxyCommand reaches the host through another) and there
// is nothing to dial. When ssh cannot say (no client, a config it rejects),
// it is d's own address on its port, 22 by default.
func (d Dest) Endpoint(ctx context.Context) (addr string, ok bool) {
	base := SSHCommand()
	argv := append([]string{"-G"}, base[1:]...)
	if d.Port != 0 {
		argv = append(argv, "-p", strconv.Itoa(d.Port))
	}
	if d.User != "" {
		argv = append(argv, "-l", d.User)
	}
	argv = append(argv, "--", d.Addr)
	out, err := exec.CommandContext(ctx, base[0], argv...).Output()
	if err != nil {
		return d.hostPort(), true
	}
	return endpointOf(string(out), d)
}

// endpointOf reads `ssh -G`'s output: its hostname and port, and whether a
// proxy stands between.
func endpointOf(out string, d Dest) (string, bool) {
	host, port := d.Addr, d.Port
	if port == 0 {
		port = 22
	}
	for _, line := range strings.Split(out, "\n") {
		key, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch strings.ToLower(key) {
		case "hostname":
			host = value
		case "port":
			if p, err := strconv.Atoi(value); err == nil && p > 0 {
				port = p
			}
		case "proxyjump", "proxycommand":
			if value != "" && value != "none" {
				return "", false
			}
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), true
}

// ClockOffset measures h's clock against this host's: the host's time
// minus the controller's, and the bound of its error. In one ssh session
// the host answers each line the controller sends with its time (`date
// +%s%N`); the offset is that time minus the midpoint of the line's send
// and the answer's arrival, from the fastest of rounds round trips. The
// first answer waits for the session to start and is not counted, so the
// bound (half a round trip) is the network's and a fork's, about a
// millisecond on a LAN, not ssh's start-up.
func (h Host) ClockOffset(ctx context.Context, rounds int) (offset, bound time.Duration, err error) {
	cmd := h.command(ctx, []string{"sh", "-c", "while read -r _; do date +%s%N; done"})
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return 0, 0, h.classify(err, "", false)
	}
	br := bufio.NewReader(out)
	bound = -1
	var roundErr error
	for i := 0; i <= rounds && roundErr == nil; i++ {
		sent := time.Now()
		if _, err := io.WriteString(in, "\n"); err != nil {
			roundErr = err
			break
		}
		line, err := br.ReadString('\n')
		got := time.Now()
		if err != nil {
			roundErr = err
			break
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil {
			roundErr = fmt.Errorf("%s: `date +%%s%%N` printed %q, not nanoseconds since 1970", h.label(), strings.TrimSpace(line))
			break
		}
		if i == 0 {
			continue
		}
		rtt := got.Sub(sent)
		if bound < 0 || rtt/2 < bound {
			offset, bound = time.Unix(0, ns).Sub(sent.Add(rtt/2)), rtt/2
		}
	}
	in.Close()
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return 0, 0, fmt.Errorf("%s: stopped: %w", h.label(), context.Cause(ctx))
	case werr != nil && !errors.Is(werr, exec.ErrWaitDelay):
		return 0, 0, h.classify(werr, stderr.String(), false)
	case roundErr != nil:
		return 0, 0, roundErr
	}
	return offset, bound, nil
}
