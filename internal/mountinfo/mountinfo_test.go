package mountinfo

import (
	"os"
	"path/filepath"
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

func TestFields(t *testing.T) {
	line := "36 35 98:0 / /mnt/a\vb\u00a0c rw  - ext4\t/dev/x\n"
	got := Fields(line)
	want := []string{"36", "35", "98:0", "/", "/mnt/a\vb\u00a0c", "rw", "-", "ext4", "/dev/x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Fields(%q) = %q, want %q", line, got, want)
	}
	for _, s := range []string{"/a b", "/a\tb", "/a\nb", `/a\b`, "/a\vb"} {
		if f := Fields("x " + Escape(s) + " y"); len(f) != 3 || Unescape(f[1]) != s {
			t.Errorf("Fields of an escaped %q = %q", s, f)
		}
	}
}

func TestParse(t *testing.T) {
	m, ok := Parse(`36 35 98:0 /mnt1 /mnt/my\040data rw,noatime master:1 shared:2 - ext3 /dev/my\040disk rw,errors=continue` + "\n")
	want := Mount{Device: "98:0", Point: "/mnt/my data", Options: "rw,noatime", FSType: "ext3", Source: "/dev/my disk",
		SuperOptions: "rw,errors=continue"}
	if !ok || m != want {
		t.Errorf("Parse = %+v, %v; want %+v", m, ok, want)
	}
	if m, ok := Parse("22 1 259:2 / / rw - tmpfs tmpfs"); !ok || m.Source != "tmpfs" || m.SuperOptions != "" {
		t.Errorf("a line without superblock options: %+v, %v", m, ok)
	}
	for _, line := range []string{"", "22 1 259:2 / / rw - ext4", "22 1 259:2 / / rw ext4 /dev/a rw", "22 - 259:2 / / rw ext4 /dev/a"} {
		if m, ok := Parse(line); ok {
			t.Errorf("Parse(%q) = %+v; want not a mount", line, m)
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

// Read parses a whole table and skips what does not parse.
func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mountinfo")
	table := "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n" +
		"not a mount line\n" +
		"95 22 7:0 / /mnt/tier\\040one rw - btrfs /dev/loop0 rw,compress-force=zstd:3\n"
	if err := os.WriteFile(path, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	ms, err := Read(path)
	if err != nil || len(ms) != 2 {
		t.Fatalf("Read: %+v, %v; want the two mounts", ms, err)
	}
	if ms[0].Device != "259:2" || ms[0].Point != "/" || ms[1].Point != "/mnt/tier one" || ms[1].FSType != "btrfs" ||
		ms[1].Source != "/dev/loop0" || ms[1].SuperOptions != "rw,compress-force=zstd:3" {
		t.Errorf("Read: %+v", ms)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("Read of a missing table: no error")
	}
}
