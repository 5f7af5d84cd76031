// Package systool finds the system's administration tools (blkid,
// losetup, mkfs.*, useradd…) where Debian puts them, in /usr/sbin and
// /sbin, which an ordinary user's PATH does not hold, nor root's after a
// plain su.
package systool

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
)

// Dirs are searched, in order, after PATH.
var Dirs = []string{"/usr/local/sbin", "/usr/sbin", "/sbin"}

// LookPath is exec.LookPath(name), then name in Dirs. A name with a slash
// is only looked up as given. Its error, when nothing is found, is
// exec.LookPath's (errors.Is(err, exec.ErrNotFound)).
func LookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil || filepath.Base(name) != name || !errors.Is(err, exec.ErrNotFound) {
		return p, err
	}
	for _, d := range Dirs {
		c := filepath.Join(d, name)
		if fi, serr := os.Stat(c); serr == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return c, nil
		}
	}
	return "", err
}
