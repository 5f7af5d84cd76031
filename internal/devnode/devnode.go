// Package devnode says what a path is at the device level: the device
// number a block device node stands for, written as the kernel writes it,
// and a special file's kind in words. fio's target guard and the space scan
// both check what they are given with it before they read or write.
package devnode

import (
	"fmt"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// Rdev is the device a device node stands for (0 for anything else).
func Rdev(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Rdev)
	}
	return 0
}

// Num formats a device number as sysfs and mountinfo do: MAJ:MIN.
func Num(rdev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev))
}

// Describe names a special file's kind for messages: "named pipe", …
func Describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
