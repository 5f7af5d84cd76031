package cgroup

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
)

// Command is exec.CommandContext(ctx, name, arg...), except that the process
// is inside the cgroups whose cgroup.procs files are procs before it runs a
// single instruction of name: /bin/sh writes its own PID into each file, then
// execs name, which keeps that PID. So every I/O the program issues, the
// first included, draws from those groups' budgets, and whatever it forks is
// born inside them. Moving a process after it started would leave its first
// I/O outside (a program that starts by reading much never waits to be
// moved). With no procs it is plain exec.CommandContext.
//
// The shell writes the files as the user the command runs as: a command that
// should run as another, unprivileged user (SysProcAttr.Credential) would be
// refused. Run instead, as root, a program that switches users and then execs
// the real one (e.g. setpriv), as name.
//
// A failed write ends the shell before it execs name: the command fails with
// the shell's message ("sh: 1: cannot create …: Permission denied") and
// exit status 2.
func Command(ctx context.Context, procs []string, name string, arg ...string) *exec.Cmd {
	if len(procs) == 0 {
		return exec.CommandContext(ctx, name, arg...)
	}
	var script strings.Builder
	for _, f := range procs {
		script.WriteString("echo $$ > " + shellQuote(f) + " && ")
	}
	script.WriteString(`exec "$@"`)
	return exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script.String(), "sh", name}, arg...)...)
}

// shellQuote quotes s for sh: single quotes, with embedded ones escaped.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ProcsFiles are the cgroup.procs files of Dirs: what Command takes to start
// a process in the group. None for a group of no hierarchy.
func (g *Group) ProcsFiles() []string {
	var files []string
	for _, d := range g.Dirs() {
		files = append(files, filepath.Join(d, "cgroup.procs"))
	}
	return files
}
