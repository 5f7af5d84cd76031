package server

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// EngineMariaDB is the engine name of a managed MariaDB server.
const EngineMariaDB = "mariadb"

// MariaDBBinaries are the programs a managed MariaDB server needs.
type MariaDBBinaries struct {
	Mariadbd  string // the server
	InstallDB string // mariadb-install-db
	Version   string // e.g. "10.11.19"
}

// mariaDirs are where distributions put mariadbd besides $PATH.
var mariaDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/mysql/bin", "/usr/local/bin"}

// errNoMariaDB is the one line a user without MariaDB gets.
var errNoMariaDB = errors.New("the MariaDB server (mariadbd, mariadb-install-db) is not installed; install it with: sudo apt-get install mariadb-server mariadb-backup")

// FindMariaDB finds mariadbd and mariadb-install-db, and the server's version.
func FindMariaDB() (MariaDBBinaries, error) {
	find := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, d := range mariaDirs {
			if p := filepath.Join(d, name); isExecutable(p) {
				return p
			}
		}
		return ""
	}
	b := MariaDBBinaries{Mariadbd: find("mariadbd"), InstallDB: find("mariadb-install-db")}
	if b.Mariadbd == "" || b.InstallDB == "" {
		return b, errNoMariaDB
	}
	out, err := exec.Command(b.Mariadbd, "--version").Output()
	if err != nil {
		return b, fmt.Errorf("%s --version: %v", b.Mariadbd, err)
	}
	m := mariaVersion.FindStringSubmatch(string(out))
	if m == nil {
		return b, fmt.Errorf("%s --version printed %q, which names no version", b.Mariadbd, strings.TrimSpace(string(out)))
	}
	b.Version = m[1]
	return b, nil
}

// mariaVersion finds "10.11.19" in "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for …".
var mariaVersion = regexp.MustCompile(`Ver (\d+\.\d+\.\d+)`)
