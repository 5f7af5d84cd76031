// Package systree writes sysfs-like fixture trees for tests from a text
// manifest: sysfs paths hold ':' (252:0, 0000:00:04.0), which Go module zips
// reject, and module zips drop symlinks, so such trees cannot live in
// testdata as they are.
package systree

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var manifestLine = regexp.MustCompile(`^(\S+)\s+(\S+)\s*(.*)$`)

// Build writes a sysfs-like tree from a manifest of lines
//
//	file <path> <content>   (content + "\n"; or Go-quoted, written as is)
//	dir  <path>
//	link <path> </target>   (target relative to the tree root; written as a relative link)
func Build(t testing.TB, manifest string) string {
	t.Helper()
	f, err := os.Open(manifest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := t.TempDir()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := manifestLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s:%d: malformed line %q", manifest, n, line)
		}
		kind, path, rest := m[1], filepath.Join(root, m[2]), m[3]
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case kind == "dir":
			err = os.MkdirAll(path, 0o755)
		case kind == "file" && strings.HasPrefix(rest, `"`):
			var content string
			if content, err = strconv.Unquote(rest); err == nil {
				err = os.WriteFile(path, []byte(content), 0o644)
			}
		case kind == "file" && rest != "":
			err = os.WriteFile(path, []byte(rest+"\n"), 0o644)
		case kind == "link" && strings.HasPrefix(rest, "/"):
			var rel string
			rel, err = filepath.Rel(filepath.Dir(path), filepath.Join(root, rest))
			if err == nil {
				err = os.Symlink(rel, path)
			}
		default:
			t.Fatalf("%s:%d: malformed line %q", manifest, n, line)
		}
		if err != nil {
			t.Fatalf("%s:%d: %v", manifest, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return root
}
