// Package mountinfo holds the kernel's escaping of paths in its mount
// tables (/proc/*/mountinfo, /proc/mounts, /proc/swaps), which the packages
// reading those tables share: prometheus/procfs, which parses mountinfo for
// the cgroup package, returns its fields still escaped.
package mountinfo

import (
	"fmt"
	"os"
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

// Mount is one line of a mountinfo table (proc(5)), its paths unescaped:
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//	(1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)   (10)         (11)
type Mount struct {
	Device       string // (3) MAJ:MIN, as written
	Point        string // (5)
	Options      string // (6) the mount's own options
	FSType       string // (9)
	Source       string // (10)
	SuperOptions string // (11) the superblock's options; "" when absent
}

// Parse reads one mountinfo line, split at the kernel's separators
// (Fields). It reports false for a line without the six fields before the
// optional ones, the "-" that ends those, the type and the source.
func Parse(line string) (Mount, bool) {
	f := Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+2 >= len(f) {
		return Mount{}, false
	}
	m := Mount{Device: f[2], Point: Unescape(f[4]), Options: f[5], FSType: f[sep+1], Source: Unescape(f[sep+2])}
	if sep+3 < len(f) {
		m.SuperOptions = Unescape(f[sep+3])
	}
	return m, true
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

// Read parses the mount table at path (a process's mountinfo, e.g.
// /proc/self/mountinfo, or a fixture tree's); lines that do not parse are
// skipped.
func Read(path string) ([]Mount, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Mount
	for line := range strings.Lines(string(b)) {
		if m, ok := Parse(strings.TrimSuffix(line, "\n")); ok {
			out = append(out, m)
		}
	}
	return out, nil
}
