// Package mountinfo holds the kernel's escaping of paths in its mount
// tables (/proc/*/mountinfo, /proc/mounts, /proc/swaps), which the packages
// reading those tables share: prometheus/procfs, which parses mountinfo for
// the cgroup package, returns its fields still escaped.
package mountinfo

import (
	"fmt"
	"strconv"
	"strings"
)

// Unescape undoes the kernel's \ooo (octal) escapes of space, tab, newline
// and backslash. A backslash not followed by three octal digits of a byte
// value stays as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Fields splits a line of a mount table at the kernel's separators: space,
// tab and newline, which it always escapes inside a field. strings.Fields
// would also split at a raw vertical tab or a no-break space, which a path
// may hold unescaped.
func Fields(line string) []string {
	return strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
}

// Escape is the kernel's escaping of a path in its mount tables (fs/proc:
// mangle(), the characters " \t\n\\"), the inverse of Unescape: tests use
// it to write the lines the kernel would.
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\\':
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
