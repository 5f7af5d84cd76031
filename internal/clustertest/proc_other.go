//go:build !linux

package clustertest

import (
	"os/exec"
	"syscall"
)

// dieWithParent: network namespaces are Linux's only, so New skips before
// anything starts; only the process group is set.
func dieWithParent(cmd *exec.Cmd, group bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: group}
}
