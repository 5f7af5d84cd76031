package backup

import (
	"strings"
	"testing"
)

// The tools' command line never carries the password, wherever the DSN
// puts it; PGPASSWORD gets the one libpq would use.
func TestClientConnKeepsThePasswordOffTheCommandLine(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://u:s%40cret@h:5/db?sslmode=disable":                "s@cret",
		"postgres://u@h:5/db?password=s%40cret+x&sslmode=disable":     "s@cret+x",
		"postgres://u:other@h:5/db?sslmode=disable&password=s%20cret": "s cret", // the parameter wins
	} {
		conn, pw, err := clientConn(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if pw != want || strings.Contains(conn, "cret") || strings.Contains(conn, "other") || strings.Contains(conn, "password") {
			t.Errorf("clientConn(%q) = %q, %q; want the password %q and a connection string without it", dsn, conn, pw, want)
		}
	}
}
