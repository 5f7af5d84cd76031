package server

import "testing"

// errorLines keeps the lines that say what went wrong, not the advice a
// tool prints after every failure.
func TestErrorLines(t *testing.T) {
	out := "Installing MariaDB/MySQL system tables ...\n2026-11-28 [ERROR] mariadbd: Can't create directory\n" +
		"Installation of system tables failed!\nPlease check all of the above\nat https://mariadb.org/jira\n"
	if got := errorLines(out, 5); got != "2026-11-28 [ERROR] mariadbd: Can't create directory" {
		t.Errorf("errorLines = %q", got)
	}
	if got := errorLines("a\nb\nc\n", 2); got != "b | c" {
		t.Errorf("without an error line: %q; want the last lines", got)
	}
}
