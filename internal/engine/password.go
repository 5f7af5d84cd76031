package engine

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// passwordParam matches a password given as a parameter rather than in a
// URL's userinfo: password= (or sslpassword=) in a URL's query or in a
// keyword/value DSN, its value quoted ('…', with backslash escapes) or bare
// (up to a space or '&'). Both forms reach pgx, so both must be redacted.
var passwordParam = regexp.MustCompile(`(^|[\s?&])((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&]*)`)

// keywordPasswordParam is passwordParam for a keyword/value DSN, where '&'
// is an ordinary character and a backslash escapes the next one (a space
// too): a bare value runs to an unescaped space.
var keywordPasswordParam = regexp.MustCompile(`(^|\s)((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|(?:\\.|[^\s\\])*\\?)`)

// passwordParamIn is the pattern of dsn's form.
func passwordParamIn(dsn string) *regexp.Regexp {
	if strings.Contains(dsn, "://") {
		return passwordParam
	}
	return keywordPasswordParam
}

// redactParams replaces the value of every password parameter with xxxxx.
func redactParams(s string) string {
	return passwordParamIn(s).ReplaceAllString(s, "${1}${2}xxxxx")
}

// paramPassword returns the value of a DSN's last password parameter (the
// one that wins), unquoted or percent-decoded; "" when there is none.
func paramPassword(dsn string) string {
	pw := ""
	for _, m := range passwordParamIn(dsn).FindAllStringSubmatch(dsn, -1) {
		key, _, _ := strings.Cut(m[2], "=")
		if strings.TrimSpace(key) != "password" {
			continue
		}
		v := m[3]
		switch {
		case strings.HasPrefix(v, "'"):
			v = strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
			v = unescapeKeyword(v)
		case strings.Contains(dsn, "://"):
			// As pgx and libpq decode it: '+' stays '+'.
			if d, err := url.PathUnescape(v); err == nil {
				v = d
			}
		default:
			v = unescapeKeyword(v)
		}
		pw = v
	}
	return pw
}

// unescapeKeyword undoes a keyword/value DSN's backslash escapes (\' and \\).
func unescapeKeyword(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// RedactIn returns msg with every part of dsn that carries its password
// replaced by its redacted form, wherever msg quotes it: the whole DSN (as
// given, or as %q writes it) by Redact(dsn), its userinfo ("user:pw@") by
// "user:xxxxx@", and each password parameter ("password=pw") by
// "password=xxxxx". It is for text tierbench does not format itself (a
// driver's or a command's error, which may quote a DSN); what tierbench
// formats uses Redact(dsn) in the first place.
//
// It never looks for the password on its own: a short or common one ("p",
// "postgres") is found inside ordinary words, and masking it there garbles
// the message and shows a reader which letters the password holds.
func RedactIn(msg, dsn string) string {
	if msg == "" {
		return msg
	}
	span, red, userinfo := userinfoToken(dsn)
	var params [][]string // password= and sslpassword= with a value
	for _, m := range passwordParamIn(dsn).FindAllStringSubmatch(dsn, -1) {
		if m[3] != "" && m[3] != "''" {
			params = append(params, m)
		}
	}
	if !userinfo && len(params) == 0 {
		return msg // nothing secret in it (or not a DSN at all)
	}
	msg = replaceForms(msg, dsn, Redact(dsn), false)
	if userinfo {
		msg = replaceForms(msg, span, red, false)
	}
	for _, m := range params {
		msg = replaceForms(msg, m[2]+m[3], m[2]+"xxxxx", !strings.HasPrefix(m[3], "'"))
	}
	return msg
}

// userinfoToken returns the userinfo of dsn as written, with its '@'
// ("user:pw@"), and its redacted form; ok is false when there is no
// password in it.
func userinfoToken(dsn string) (span, redacted string, ok bool) {
	i := strings.Index(dsn, "://")
	if i < 0 {
		return "", "", false
	}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		// The authority ends at the first '/', '?' or '#'; its userinfo at
		// its last '@', as url.Parse reads it.
		auth := dsn[i+3:]
		if j := strings.IndexAny(auth, "/?#"); j >= 0 {
			auth = auth[:j]
		}
		at := strings.LastIndex(auth, "@")
		if at < 0 {
			return "", "", false
		}
		user, _, has := strings.Cut(auth[:at], ":")
		if !has {
			return "", "", false
		}
		return auth[:at+1], user + ":xxxxx@", true
	}
	start, end, found := userinfoSpan(dsn)
	if !found || !strings.Contains(dsn[start:end], ":") {
		return "", "", false
	}
	// As Redact: the user of a DSN that does not parse is no surer than
	// its password.
	return dsn[start : end+1], "xxxxx@", true
}

// replaceForms replaces in msg every occurrence of token, as written and as
// %q (or %+q) writes it, by repl, written the same way. bounded: only where
// the token is not followed by a letter, a digit or '%' (a bare parameter
// value that goes on is another value).
func replaceForms(msg, token, repl string, bounded bool) string {
	forms := [][2]string{{token, repl}}
	for _, quote := range []func(string) string{strconv.Quote, strconv.QuoteToASCII} {
		q, r := quote(token), quote(repl)
		if q = q[1 : len(q)-1]; q != token {
			forms = append(forms, [2]string{q, r[1 : len(r)-1]})
		}
	}
	for _, form := range forms {
		f, repl := form[0], form[1]
		if !bounded {
			msg = strings.ReplaceAll(msg, f, repl)
			continue
		}
		var b strings.Builder
		for {
			i := strings.Index(msg, f)
			if i < 0 {
				break
			}
			b.WriteString(msg[:i])
			if next := i + len(f); next < len(msg) && continuesValue(msg[next]) {
				b.WriteString(f)
			} else {
				b.WriteString(repl)
			}
			msg = msg[i+len(f):]
		}
		b.WriteString(msg)
		msg = b.String()
	}
	return msg
}

// continuesValue reports whether c can go on a bare parameter value.
func continuesValue(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '%'
}

// passwordOption matches where an option or parameter gives a password:
// password=, --password=, sslpassword=, "password = " in an option file.
var passwordOption = regexp.MustCompile(`(?i)password\s*=\s*`)

// RedactPasswordOptions returns s (a tool's output, say, that was given
// pw out of band) with every option or parameter that gives pw, bare or
// quoted (password=pw, --password="pw", password = 'pw'), written with
// xxxxx for pw. Like RedactIn, it never looks for pw on its own.
func RedactPasswordOptions(s, pw string) string {
	if pw == "" || s == "" {
		return s
	}
	q := strconv.Quote(pw)
	quoted := []string{q, `"` + pw + `"`, `'` + pw + `'`}
	var b strings.Builder
	for {
		loc := passwordOption.FindStringIndex(s)
		if loc == nil {
			break
		}
		b.WriteString(s[:loc[1]])
		s = s[loc[1]:]
		replaced := false
		for _, f := range quoted {
			if strings.HasPrefix(s, f) {
				b.WriteString("xxxxx")
				s, replaced = s[len(f):], true
				break
			}
		}
		if !replaced && strings.HasPrefix(s, pw) && (len(s) == len(pw) || !continuesValue(s[len(pw)])) {
			b.WriteString("xxxxx")
			s = s[len(pw):]
		}
	}
	b.WriteString(s)
	return b.String()
}
