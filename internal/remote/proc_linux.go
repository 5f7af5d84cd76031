package remote

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts ssh in a process group of its own, killed whole when
// the context is cancelled (ssh and a ProxyCommand it started), and has the
// kernel kill ssh when tierbench dies, even by SIGKILL, which ends the
// remote command too. A terminal's Ctrl-C reaches tierbench, not ssh:
// tierbench decides, by cancelling the context.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}
