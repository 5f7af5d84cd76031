package mountinfo

import (
	"strings"
	"testing"
)

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/srv/my\040data`: "/srv/my data",
		`/a\011b\012c`:    "/a\tb\nc",
		`/back\134slash`:  `/back\slash`,
		`/plain`:          "/plain",
		`/trailing\04`:    `/trailing\04`,
		`/not\089`:        `/not\089`,
		`/big\777`:        `/big\777`, // over a byte: not an escape
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscape(t *testing.T) {
	if got, want := Escape("/a b\t\\c\nd"), `/a\040b\011\134c\012d`; got != want {
		t.Errorf("Escape = %q, want %q", got, want)
	}
}

// FuzzUnescape: Unescape undoes the kernel's escaping of any path, leaves a
// string without backslashes as it is, and never lengthens a string.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{"/mnt", "/a b", "/tab\there", `/back\slash`, "/nl\nx", `\`, `\0`, `\04`, `\040`, `\777`, `\08x`, "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := Unescape(Escape(s)); got != s {
			t.Fatalf("Unescape(%q) = %q, want %q", Escape(s), got, s)
		}
		if !strings.Contains(s, `\`) && Unescape(s) != s {
			t.Fatalf("Unescape(%q) = %q changed a string without escapes", s, Unescape(s))
		}
		if len(Unescape(s)) > len(s) {
			t.Fatalf("Unescape(%q) = %q grew", s, Unescape(s))
		}
	})
}
