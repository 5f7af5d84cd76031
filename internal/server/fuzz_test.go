package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// gucUnquote reads a postgresql.conf string literal as PostgreSQL does
// (guc-file.l: a STRING token is '…' without a raw newline; DeescapeQuotedString
// turns a doubled quote into one and undoes \b \f \n \r \t, octal \ooo and \x for any other x).
// ok is false when PostgreSQL's lexer would not take it as one token.
func gucUnquote(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
		return "", false
	}
	s := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			return "", false
		case c == '\'':
			if i+1 >= len(s) || s[i+1] != '\'' {
				return "", false // the literal would end here
			}
			b.WriteByte('\'')
			i++
		case c == '\\':
			if i+1 >= len(s) || s[i+1] == '\n' {
				return "", false
			}
			i++
			switch e := s[i]; e {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v := 0
				for k := 0; k < 3 && i < len(s) && s[i] >= '0' && s[i] <= '7'; k++ {
					v = v*8 + int(s[i]-'0')
					i++
				}
				i--
				b.WriteByte(byte(v))
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// FuzzConfigSetting: a --set name=value that passes ValidSettingName
// becomes exactly one line of tierbench.conf, `name = 'literal'`, which
// PostgreSQL reads back as the very value given — so no value can end the
// line early and slip in a setting of its own.
func FuzzConfigSetting(f *testing.F) {
	for _, kv := range [][2]string{{"work_mem", "64MB"}, {"search_path", "a, 'b'"}, {"x.y", `back\slash`},
		{"log_line_prefix", "%m [%p] "}, {"work_mem", "1MB'\nshared_preload_libraries = 'evil"}, {"a", "tab\there"},
		{"a", "cr\rx"}, {"a", `\n`}, {"a", "'"}, {"a", ""}, {"1a", "x"}, {"a b", "x"}, {"a", "é"}, {"a", "\x00"}} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		if !ValidSettingName(name) {
			return
		}
		if strings.ContainsAny(name, " \t\n\r'=#") {
			t.Fatalf("ValidSettingName(%q) accepted a name that is not one word", name)
		}
		conf := configFile(5432, "/run/pg", "", 0, 15, map[string]string{name: value})
		_, tail, ok := strings.Cut(conf, "# --set overrides.\n")
		if !ok {
			t.Fatalf("no --set section in:\n%s", conf)
		}
		line, rest, _ := strings.Cut(tail, "\n")
		if rest != "" {
			t.Fatalf("--set %s=%q made more than one line:\n%s", name, value, tail)
		}
		lit, ok := strings.CutPrefix(line, name+" = ")
		if !ok {
			t.Fatalf("line %q", line)
		}
		got, ok := gucUnquote(lit)
		if strings.IndexByte(value, 0) >= 0 {
			return // PostgreSQL's strings end at a NUL: no literal can carry one
		}
		if !ok || got != value {
			t.Fatalf("--set %s=%q is written %s, which PostgreSQL reads as %q (ok %v)", name, value, lit, got, ok)
		}
	})
}

// FuzzParseServerVersion: `postgres --version` output reads as a version
// that appears in it and a major number that begins it.
func FuzzParseServerVersion(f *testing.F) {
	for _, s := range []string{"postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)\n", "postgres (PostgreSQL) 9.6.24\n",
		"postgres (PostgreSQL) 16beta1\n", "postgres (PostgreSQL)\n", "postgres (PostgreSQL) x\n", "postgres (PostgreSQL) .5\n",
		"postgres (PostgreSQL) 99999999999999999999\n", "(PostgreSQL) 17 (PostgreSQL) 16", "", "postgres 15.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		v, major, err := parseServerVersion(out)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("parseServerVersion(%q): error %q is not one line", out, msg)
			}
			return
		}
		if v == "" || !strings.Contains(out, v) || major < 0 || !strings.HasPrefix(v, strconv.Itoa(major)) && !strings.HasPrefix(v, "0") {
			t.Fatalf("parseServerVersion(%q) = %q, %d", out, v, major)
		}
		if ms := majorString(v, major); ms == "" || !strings.HasPrefix(v, ms) && !strings.HasPrefix(v, "0") {
			t.Fatalf("majorString(%q, %d) = %q", v, major, ms)
		}
	})
}

// FuzzParseVersionParts: a PostgreSQL directory name such as 9.6 or 15 reads
// as numbers that, joined with dots, read the same again.
func FuzzParseVersionParts(f *testing.F) {
	for _, s := range []string{"9.6", "15", "", ".", "15.", "-1", "1.2.3", "99999999999999999999", "+5", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, ok := parseVersionParts(s)
		if !ok {
			return
		}
		strs := make([]string, len(parts))
		for i, p := range parts {
			if p < 0 {
				t.Fatalf("parseVersionParts(%q) = %v", s, parts)
			}
			strs[i] = strconv.Itoa(p)
		}
		back, ok := parseVersionParts(strings.Join(strs, "."))
		if !ok || fmt.Sprint(back) != fmt.Sprint(parts) || versionLess(parts, back) || versionLess(back, parts) {
			t.Fatalf("parseVersionParts(%q) = %v, which reads back as %v", s, parts, back)
		}
	})
}

// FuzzMemorySettings: for any --memory, each setting is a PostgreSQL size
// (kB, MB or GB) within its clamp, and never above the memory given.
func FuzzMemorySettings(f *testing.F) {
	for _, m := range []int64{0, -1, 1, 128 * mib, 1 * gib, 4*gib + 123, 1 << 62, 1<<63 - 1} {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, m int64) {
		set := MemorySettings(m)
		if m <= 0 {
			if set != nil {
				t.Fatalf("MemorySettings(%d) = %v", m, set)
			}
			return
		}
		for name, v := range set {
			var n int64
			var unit string
			if _, err := fmt.Sscanf(v, "%d%s", &n, &unit); err != nil || n < 0 {
				t.Fatalf("MemorySettings(%d): %s = %q", m, name, v)
			}
			mult := map[string]int64{"kB": kib, "MB": mib, "GB": gib}[unit]
			if mult == 0 {
				t.Fatalf("MemorySettings(%d): %s = %q has no PostgreSQL unit", m, name, v)
			}
			b := n * mult
			switch name {
			case "maintenance_work_mem":
				if b < 64*mib || b > 2*gib {
					t.Fatalf("MemorySettings(%d): %s = %s outside its clamp", m, name, v)
				}
			case "work_mem":
				if b < 4*mib || b > 256*mib {
					t.Fatalf("MemorySettings(%d): %s = %s outside its clamp", m, name, v)
				}
			default:
				if b > m {
					t.Fatalf("MemorySettings(%d): %s = %s is more than the memory", m, name, v)
				}
			}
		}
	})
}
