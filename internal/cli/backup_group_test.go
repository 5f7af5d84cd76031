package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/scenario"
	"github.com/tierbench/tierbench/internal/tier"
)

// The backups of an instance on a throttled emulated tier get a group of
// their own that draws from the tier's I/O budget (v1: the processes join
// the tier's blkio group; v2: the group is a child of the tier's); on an
// unthrottled target, none.
func TestBackupGroupWithinTheTiersBudget(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI needs this test to run: an emulated tier and its cgroups need root")
		}
		t.Skip("skipping: an emulated tier and its cgroups need root")
	}
	ctx := context.Background()
	dir := t.TempDir()
	im, err := tier.Create(ctx, dir, "sata", tier.MinSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Remove(context.Background()) })
	sata := &execTarget{Target: scenario.Target{Name: "sata", Emulate: &scenario.Emulate{ReadIOPS: 3000, WriteMBps: 200}}, path: im.MountPoint}
	in := &instance{name: "db-sata", target: sata, dataDir: filepath.Join(im.MountPoint, "db-sata")}

	grp, note, err := backupGroup(in, sata)
	if err != nil {
		t.Fatal(err)
	}
	if grp == nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI needs the backups throttled: %s", note)
		}
		t.Skipf("skipping: %s", note)
	}
	t.Cleanup(func() {
		if err := grp.Remove(); err != nil {
			t.Errorf("removing the backup group: %v", err)
		}
		if tg, err := cgroup.Open(sata.groupName()); err == nil {
			tg.Remove()
		}
	})
	procs := grp.ProcsFiles()
	inTier := false
	for _, p := range procs {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
		inTier = inTier || strings.Contains(p, "/tierbench/"+sata.groupName()+"/")
	}
	t.Logf("group %s, note %q, cgroup.procs %v", grp.Name(), note, procs)
	if !strings.HasPrefix(grp.Name(), "backup-db-sata-") || !inTier {
		t.Errorf("group %s with cgroup.procs %v; want backup-db-sata-HASH, drawing from %s", grp.Name(), procs, sata.groupName())
	}
	if grp.Version() == 1 && note != cgroup.V1WritebackNote {
		t.Errorf("note %q; want v1's writeback caveat", note)
	}

	fast := &execTarget{Target: scenario.Target{Name: "fast", Emulate: &scenario.Emulate{}}, path: dir}
	if g, note, err := backupGroup(in, fast); g != nil || note != "" || err != nil {
		t.Errorf("an unthrottled target: group %v, note %q, err %v; want none", g, note, err)
	}
}
