package inventory

import (
	"os"
	"strconv"
	"strings"
)

// readTrim returns a file's content without surrounding whitespace, or ""
// when it cannot be read: an unreadable fact is an unknown one.
func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readInt64 returns a file's content as a decimal number, or 0.
func readInt64(path string) int64 {
	n, err := strconv.ParseInt(readTrim(path), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
