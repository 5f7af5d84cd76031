//go:build !linux

package remote

import "os/exec"

// ownProcessGroup is Linux's only (Setpgid with Pdeathsig); elsewhere a
// cancelled context kills ssh alone.
func ownProcessGroup(*exec.Cmd) {}
