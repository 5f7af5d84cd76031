package fio

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when tierbench dies, even by
// SIGKILL, and puts it in a process group of its own: fio 3.33 can signal
// its whole group. The kernel's signal tracer caught a fio sending SIGTERM
// to the go and make of a test run (a group signal), which ended the whole
// run with no test failing; in tierbench's group, it would end tierbench.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
