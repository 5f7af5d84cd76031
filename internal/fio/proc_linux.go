package fio

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when tierbench dies, even by
// SIGKILL.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
