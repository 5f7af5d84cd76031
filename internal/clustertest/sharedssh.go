package clustertest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// shared is the test binary's one ssh_config for ShareSSH: a Host block per
// cluster that shares it, matched by the cluster's subnet.
var shared struct {
	sync.Mutex
	dir    string            // holds the config, while a cluster shares it
	blocks map[string]string // by the cluster's base name
	err    error
}

// ShareSSH makes $TIERBENCH_SSH_COMMAND reach c's hosts, as
// t.Setenv(remote.EnvSSHCommand, c.SSHCommand) does, in a form parallel
// tests can use (t.Setenv refuses them): the variable names one ssh_config
// of the test binary's, where every sharing cluster has a Host block of its
// subnet's addresses with its key and known_hosts. The cluster's block is
// removed when its test ends; with the last, the config and the variable
// go. It needs a cluster made with Options.SSH.
func ShareSSH(t testing.TB, c *Cluster) {
	t.Helper()
	if !c.opts.SSH {
		t.Fatal("clustertest.ShareSSH: the cluster has no sshd (Options.SSH)")
	}
	a := c.Subnet.Addr().As4()
	pattern := fmt.Sprintf("%d.%d.%d.*", a[0], a[1], a[2])
	// The block repeats the cluster's own ssh_config under its subnet's
	// pattern, so both say the same.
	own, err := os.ReadFile(strings.Fields(c.SSHCommand)[2])
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	block := strings.Replace(string(own), "Host *\n", "Host "+pattern+"\n", 1)

	shared.Lock()
	defer shared.Unlock()
	if shared.dir == "" && shared.err == nil {
		shared.dir, shared.err = os.MkdirTemp("", tempPrefix()+"ssh-")
		if shared.err == nil {
			shared.blocks = map[string]string{}
			os.Setenv(envSSHCommand, c.tools.ssh+" -F "+filepath.Join(shared.dir, "ssh_config"))
		}
	}
	if shared.err != nil {
		t.Fatalf("clustertest: %v", shared.err)
	}
	shared.blocks[c.base] = block
	if err := writeShared(); err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	t.Cleanup(func() {
		shared.Lock()
		defer shared.Unlock()
		delete(shared.blocks, c.base)
		if len(shared.blocks) == 0 { // the last: nothing left to reach
			os.Unsetenv(envSSHCommand)
			os.RemoveAll(shared.dir)
			shared.dir = ""
			return
		}
		if err := writeShared(); err != nil {
			t.Errorf("clustertest: %v", err)
		}
	})
}

// envSSHCommand is remote.EnvSSHCommand, which this package cannot import:
// remote's own tests use it.
const envSSHCommand = "TIERBENCH_SSH_COMMAND"

// writeShared replaces the shared ssh_config with the blocks now shared, at
// once (a rename), so that an ssh starting meanwhile reads a whole file.
func writeShared() error {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(shared.blocks)) {
		b.WriteString(shared.blocks[k])
	}
	tmp := filepath.Join(shared.dir, "ssh_config.new")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(shared.dir, "ssh_config"))
}
