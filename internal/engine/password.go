package engine

import (
	"net/url"
	"regexp"
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
