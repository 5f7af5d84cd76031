package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
)

// The kinds of ssh failure; an *SSHError wraps one (errors.Is).
var (
	// ErrKeyRefused: the host did not accept any key the controller offered.
	ErrKeyRefused = errors.New("ssh refused the key")
	// ErrHostKeyUnknown: the host's key is not in known_hosts.
	ErrHostKeyUnknown = errors.New("unknown host key")
	// ErrHostKeyChanged: the host's key differs from the one known_hosts has.
	ErrHostKeyChanged = errors.New("changed host key")
	// ErrUnreachable: no ssh connection (refused, timed out, no route, name
	// not resolved, closed before login).
	ErrUnreachable = errors.New("host unreachable")
	// ErrNoTierbench: the host has no tierbench where the controller looked.
	ErrNoTierbench = errors.New("no tierbench on the host")
	// ErrNoSSHClient: the controller has no ssh client to run.
	ErrNoSSHClient = errors.New("no ssh client")
	// ErrSSH: ssh failed in another way.
	ErrSSH = errors.New("ssh failed")
)

// SSHError is a failure of ssh itself, or of finding tierbench on the host:
// Msg is one line naming the host and saying what would fix it.
type SSHError struct {
	Host string // "name (user@addr:port)"
	Kind error  // ErrKeyRefused, ErrHostKeyUnknown, …
	Msg  string
}

func (e *SSHError) Error() string { return e.Msg }
func (e *SSHError) Unwrap() error { return e.Kind }

// ExitError is a remote command that ran and exited non-zero. For tierbench,
// Code follows its contract: 1 a failure, 2 bad input, 3 a breached
// threshold, 130 interrupted.
type ExitError struct {
	Host string // "name (user@addr:port)"
	Code int    // the remote exit status
	// Msg is tierbench's last "tierbench: …" line on stderr (for Shell, the
	// last line of stderr), or "… exited N" when there was none.
	Msg string
}

func (e *ExitError) Error() string { return e.Host + ": " + e.Msg }

// BadInput tells whether tierbench rejected its input (exit 2).
func (e *ExitError) BadInput() bool { return e.Code == 2 }

// Breached tells whether a tierbench run breached a threshold (exit 3).
func (e *ExitError) Breached() bool { return e.Code == 3 }

// Classify turns the error of a Command's Run or Wait, with what ssh wrote
// on stderr, into a one-line error naming the host: an *SSHError for ssh's
// own failures and a missing tierbench, an *ExitError for tierbench's.
func (h Host) Classify(err error, stderr string) error {
	return h.classify(err, stderr, true)
}

func (h Host) classify(err error, stderr string, isTierbench bool) error {
	if err == nil {
		return nil
	}
	label := h.label()
	d, perr := ParseSSH(h.SSH)
	if perr != nil {
		return fmt.Errorf("host %s: %w", label, perr)
	}
	lines := stderrLines(stderr)
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() < 0 {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, exec.ErrDot) || errors.Is(err, fs.ErrNotExist) {
			client := SSHCommand()[0]
			return &SSHError{Host: label, Kind: ErrNoSSHClient, Msg: fmt.Sprintf(
				"%s: the ssh client %q is not on this controller: install OpenSSH's client (apt-get install openssh-client) or set %s",
				label, client, EnvSSHCommand)}
		}
		return &SSHError{Host: label, Kind: ErrSSH, Msg: fmt.Sprintf("%s: ssh: %s", label, oneLine(err.Error()))}
	}
	code := xe.ExitCode()
	if code == 255 {
		if e := h.sshFailure(label, d, lines); e != nil {
			return e
		}
	}
	if isTierbench && (code == 127 || code == 126) {
		if e := h.noTierbench(label, code, lines); e != nil {
			return e
		}
	}
	msg := ""
	if isTierbench {
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.HasPrefix(lines[i], "tierbench: ") {
				msg = lines[i]
				break
			}
		}
		if msg == "" {
			msg = fmt.Sprintf("tierbench exited %d", code)
			if n := len(lines); n > 0 {
				msg += ": " + lines[n-1]
			}
		}
	} else {
		msg = fmt.Sprintf("the command exited %d", code)
		if n := len(lines); n > 0 {
			msg += ": " + lines[n-1]
		}
	}
	return &ExitError{Host: label, Code: code, Msg: msg}
}

// sshFailure recognizes ssh's own messages (it exits 255 for all of them);
// nil when stderr has none, as when the remote command itself exited 255.
func (h Host) sshFailure(label string, d Dest, lines []string) error {
	all := strings.Join(lines, "\n")
	has := func(s string) bool { return strings.Contains(all, s) }
	fail := func(kind error, format string, args ...any) error {
		return &SSHError{Host: label, Kind: kind, Msg: label + ": " + fmt.Sprintf(format, args...)}
	}
	user := d.User
	if user == "" {
		user = "the login user"
	}
	kh := d.knownHostsName()
	port := d.Port
	if port == 0 {
		port = 22
	}
	switch {
	case has("REMOTE HOST IDENTIFICATION HAS CHANGED") || has("has changed and you have requested strict checking"):
		return fail(ErrHostKeyChanged,
			"the host key of %s is not the one in known_hosts: the host was reinstalled, or something is between you and it; tierbench never accepts it: check the new key's fingerprint on the host (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), then replace it: ssh-keygen -R '%s' and ssh-keyscan -p %d %s >> ~/.ssh/known_hosts",
			d.hostPort(), kh, port, d.Addr)
	case has("Host key verification failed") || (has("host key is known for") && has("strict checking")):
		return fail(ErrHostKeyUnknown,
			"the host key of %s is not in known_hosts, and tierbench never accepts an unknown key: check its fingerprint on the host (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), then add it: ssh-keyscan -p %d %s >> ~/.ssh/known_hosts",
			d.hostPort(), port, d.Addr)
	case has("Permission denied ("):
		return fail(ErrKeyRefused,
			"ssh refused the key: %s on %s accepted none of the controller's keys; install the controller's public key (~/.ssh/id_ed25519.pub) in %s's ~/.ssh/authorized_keys there, or set the right IdentityFile for %s in ~/.ssh/config",
			user, d.Addr, user, d.Addr)
	case has("Could not resolve hostname"):
		return fail(ErrUnreachable, "cannot resolve %s: check the name, /etc/hosts or DNS", d.Addr)
	}
	for _, c := range []struct{ text, why string }{
		{"Connection refused", "connection refused (is sshd running there, on that port?)"},
		{"Connection timed out during banner exchange", "ssh connected but sshd did not answer in time"},
		{"timed out", "connection timed out (a firewall, or the host is down?)"},
		{"No route to host", "no route to host (the host is down, or the address is wrong?)"},
		{"Network is unreachable", "network unreachable from this controller"},
		{"Connection closed by", "sshd closed the connection before login (AllowUsers, MaxStartups or a firewall?)"},
		{"Connection reset by", "sshd reset the connection before login (AllowUsers, MaxStartups or a firewall?)"},
		{"kex_exchange_identification", "sshd closed the connection before login (AllowUsers, MaxStartups or a firewall?)"},
	} {
		if has(c.text) {
			return fail(ErrUnreachable, "cannot reach %s: %s", d.hostPort(), c.why)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "ssh: ") {
			return fail(ErrSSH, "%s", lines[i])
		}
	}
	return nil
}

// noTierbench recognizes the shell's "not found" (127) and "cannot
// execute" (126) for the tierbench binary.
func (h Host) noTierbench(label string, code int, lines []string) error {
	last := ""
	if n := len(lines); n > 0 {
		last = lines[n-1]
	}
	if strings.HasPrefix(last, "tierbench: ") {
		return nil // tierbench ran and said why
	}
	if h.Tierbench == "" {
		if code == 126 {
			return &SSHError{Host: label, Kind: ErrNoTierbench, Msg: fmt.Sprintf(
				"%s: the tierbench on the host's PATH cannot be run (%s): fix its permissions, or give the host `tierbench: /path/to/tierbench`", label, last)}
		}
		return &SSHError{Host: label, Kind: ErrNoTierbench, Msg: fmt.Sprintf(
			"tierbench is not on %s's PATH: install it there or give the host `tierbench: /path/to/tierbench`", label)}
	}
	if code == 126 {
		return &SSHError{Host: label, Kind: ErrNoTierbench, Msg: fmt.Sprintf(
			"%s: %s cannot be run there (%s): fix its permissions, or the host's `tierbench:` path", label, h.Tierbench, last)}
	}
	return &SSHError{Host: label, Kind: ErrNoTierbench, Msg: fmt.Sprintf(
		"%s: there is no tierbench at %s: install it there or fix the host's `tierbench:` path", label, h.Tierbench)}
}

// stderrLines is stderr's non-empty lines, without ssh's carriage returns.
func stderrLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r", ""), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
