package remote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// unquote parses s as one POSIX sh word made of plain characters, '…'
// strings and backslash escapes, the way sh would, and says whether s is
// exactly one such word (no unquoted space, metacharacter or open quote).
func unquote(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case c == '\\':
			if i+1 >= len(s) || s[i+1] == '\n' {
				return "", false
			}
			b.WriteByte(s[i+1])
			i += 2
		case isPlainWord(s[i:i+1]) || (c == '=' && i > 0):
			b.WriteByte(c)
			i++
		default:
			return "", false
		}
	}
	if s == "" {
		return "", false // an empty word needs quotes to exist
	}
	return b.String(), true
}

func FuzzQuote(f *testing.F) {
	for _, s := range quoteCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		got, ok := unquote(q)
		if !ok || got != s {
			t.Fatalf("Quote(%q) = %q, which sh reads as %q (one word: %v)", s, q, got, ok)
		}
		if s != "" && isPlainWord(s) && q != s {
			t.Fatalf("Quote(%q) = %q; a plain word needs no quotes", s, q)
		}
	})
}

func FuzzParseSSH(f *testing.F) {
	for _, s := range []string{"10.0.0.5", "root@10.0.0.5:22", "user@[::1]:2222", "[fe80::1%eth0]", "db1",
		"a@b:x", "h:0", "::1", "[::1", "-oProxyCommand=x", "", "u@h@h", "[10.0.0.1]:22", "h:065535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseSSH(s)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") && !strings.ContainsAny(s, "\n\r") {
				t.Fatalf("ParseSSH(%q): the error is not one line: %q", s, msg)
			}
			if d != (Dest{}) {
				t.Fatalf("ParseSSH(%q) failed but returned %+v", s, d)
			}
			return
		}
		if d.Addr == "" || d.Addr[0] == '-' || (d.User != "" && d.User[0] == '-') {
			t.Fatalf("ParseSSH(%q) = %+v: an empty address, or one ssh would read as an option", s, d)
		}
		if d.Port < 0 || d.Port > 65535 {
			t.Fatalf("ParseSSH(%q) = %+v: port out of range", s, d)
		}
		if !utf8.ValidString(d.Addr) || strings.ContainsAny(d.User+d.Addr, " \t\n'\"\\$`;&|<>(){}*?[]!#~@") {
			t.Fatalf("ParseSSH(%q) = %+v: a character a shell or ssh would read", s, d)
		}
		if Quote(d.User) != d.User && d.User != "" || Quote(d.Addr) != d.Addr {
			t.Fatalf("ParseSSH(%q) = %+v: user or address needs quoting", s, d)
		}
		back, err := ParseSSH(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseSSH(%q) = %+v, whose String %q parses to %+v, %v", s, d, d.String(), back, err)
		}
		argv := sshArgv(d, "true")
		if n := len(argv); argv[n-3] != "--" || argv[n-2] != d.Addr {
			t.Fatalf("argv %q does not end with -- ADDR COMMAND", argv)
		}
	})
}
