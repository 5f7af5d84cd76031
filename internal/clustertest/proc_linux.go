package clustertest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when the test binary dies, even by
// SIGKILL (`ip netns exec` execs the command, which keeps the setting);
// with group, cmd leads a process group of its own, killed whole at
// cleanup.
func dieWithParent(cmd *exec.Cmd, group bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: group, Pdeathsig: syscall.SIGKILL}
}
