//go:build unix

package results

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process with this PID exists. Signal 0 checks
// without signalling: EPERM means it exists but is someone else's. A reused
// PID reads as alive, so a killed run may keep reading "running" until
// that other process ends too.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
