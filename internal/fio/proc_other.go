//go:build !linux

package fio

import "os/exec"

// dieWithParent is Linux's only (Pdeathsig); elsewhere fio outlives a killed
// tierbench until its runtime ends.
func dieWithParent(*exec.Cmd) {}
