package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/systree"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// vmOptions points Options at the testdata/vm fixture, resolving every path
// to res.
func vmOptions(t *testing.T, target string, res telemetry.Resolution) Options {
	t.Helper()
	return Options{
		Target:   target,
		ProcRoot: filepath.Join("testdata", "vm", "proc"),
		EtcRoot:  filepath.Join("testdata", "vm", "etc"),
		SysRoot:  systree.Build(t, filepath.Join("testdata", "vm", "sys.txt")),
		Resolve: func(path string) (telemetry.Resolution, error) {
			res.Path = path
			return res, nil
		},
	}
}

func TestInventoryHostFixture(t *testing.T) {
	env, notes := Collect(context.Background(), vmOptions(t, "", telemetry.Resolution{}))
	if len(notes) != 0 {
		t.Errorf("notes: %q", notes)
	}
	want := stored.Host{
		Hostname:       "db-host-1",
		CPUModel:       "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
		Cores:          4,
		Sockets:        2,
		MemoryBytes:    16365932 * 1024,
		OS:             "Debian GNU/Linux 12 (bookworm)",
		Kernel:         "6.1.0-25-amd64",
		Architecture:   "x86_64",
		Virtualization: "kvm", // DMI says QEMU, kvm-clock says KVM accelerates it
	}
	if env.Host != want {
		t.Errorf("host:\n got %+v\nwant %+v", env.Host, want)
	}
	if env.Target != nil || env.Database != nil {
		t.Errorf("target %v, database %v: want both nil without a target or a database", env.Target, env.Database)
	}
	if env.Software.Go != runtime.Version() || env.CapturedAt.IsZero() {
		t.Errorf("software %+v, captured at %v", env.Software, env.CapturedAt)
	}
}

func TestInventoryTargetOnLoop(t *testing.T) {
	// An ext4 image on loop0, its backing file on vda1: telemetry lists the
	// chain top first and the whole disk at the bottom as the leaf.
	res := telemetry.Resolution{
		Mount: "/mnt/img", FSType: "ext4", Source: "/dev/loop0", Options: "rw,noatime,nodiratime,stripe=16",
		Devices: []string{"loop0", "vda1", "vda"}, Leaves: []string{"vda"},
	}
	env, notes := Collect(context.Background(), vmOptions(t, "/mnt/img/pgdata", res))
	if len(notes) != 0 {
		t.Errorf("notes: %q", notes)
	}
	tg := env.Target
	if tg == nil {
		t.Fatal("no target")
	}
	if tg.Path != "/mnt/img/pgdata" || tg.MountPoint != "/mnt/img" || tg.Filesystem != "ext4" || tg.MountSource != "/dev/loop0" || tg.MemoryBacked {
		t.Errorf("target %+v", tg)
	}
	if want := "rw,noatime,nodiratime,stripe=16"; tg.MountOptions != want {
		t.Errorf("mount options %q, want %q", tg.MountOptions, want)
	}
	var names []string
	for _, d := range tg.Devices {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "vda,loop0,vda1" {
		t.Fatalf("devices %v, want the leaf vda first, then loop0, vda1", names)
	}
	f, ft := false, true
	want := []stored.Device{
		{Name: "vda", Vendor: "0x1af4", Transport: "virtio", CapacityBytes: 100 << 30, Rotational: &f,
			Scheduler: "mq-deadline", LogicalBlock: 512, PhysicalBlock: 4096},
		{Name: "loop0", Transport: "loop", CapacityBytes: 1 << 30, Rotational: &ft,
			Scheduler: "none", LogicalBlock: 512, PhysicalBlock: 512, BackingFile: "/var/lib/images/pg.img"},
		// The partition's own size; the rest is its disk's.
		{Name: "vda1", Vendor: "0x1af4", Transport: "virtio", CapacityBytes: 209713152 * 512, Rotational: &f,
			Scheduler: "mq-deadline", LogicalBlock: 512, PhysicalBlock: 4096},
	}
	for i := range want {
		assertDevice(t, tg.Devices[i], want[i])
	}
}

func TestInventoryTargetOnNVMe(t *testing.T) {
	res := telemetry.Resolution{
		Mount: "/mnt/fast disk", FSType: "xfs", Source: "/dev/nvme0n1", Options: "rw,noatime,attr2,inode64,logbufs=8,logbsize=32k,noquota",
		Devices: []string{"nvme0n1"}, Leaves: []string{"nvme0n1"},
	}
	env, _ := Collect(context.Background(), vmOptions(t, "/mnt/fast disk/db", res))
	tg := env.Target
	if want := "rw,noatime,attr2,inode64,logbufs=8,logbsize=32k,noquota"; tg.MountOptions != want {
		t.Errorf("mount options %q, want %q", tg.MountOptions, want)
	}
	if len(tg.Devices) != 1 {
		t.Fatalf("devices %+v", tg.Devices)
	}
	f := false
	assertDevice(t, tg.Devices[0], stored.Device{
		Name: "nvme0n1", Model: "Samsung SSD 980 PRO 1TB", Firmware: "5B2QGXA7", Transport: "nvme",
		CapacityBytes: 1953525168 * 512, Rotational: &f, Scheduler: "none", LogicalBlock: 512, PhysicalBlock: 512,
	})
}

func assertDevice(t *testing.T, got, want stored.Device) {
	t.Helper()
	rot := func(b *bool) string {
		if b == nil {
			return "unknown"
		}
		return strconv.FormatBool(*b)
	}
	if rot(got.Rotational) != rot(want.Rotational) {
		t.Errorf("%s: rotational %s, want %s", want.Name, rot(got.Rotational), rot(want.Rotational))
	}
	got.Rotational, want.Rotational = nil, nil
	if got != want {
		t.Errorf("device:\n got %+v\nwant %+v", got, want)
	}
}

func TestInventoryUnknownsStayEmpty(t *testing.T) {
	empty := t.TempDir()
	o := Options{
		Target:   "/data",
		ProcRoot: empty, SysRoot: empty, EtcRoot: empty,
		Resolve: func(path string) (telemetry.Resolution, error) {
			return telemetry.Resolution{Path: path, Mount: "/data", FSType: "ext4", Source: "/dev/sdz1",
				Devices: []string{"sdz1", "sdz"}, Leaves: []string{"sdz"}}, nil
		},
	}
	env, notes := Collect(context.Background(), o)
	if len(notes) != 0 {
		t.Errorf("notes: %q", notes)
	}
	h := env.Host
	// Architecture falls back to the binary's; everything else is unknown.
	if h.Hostname != "" || h.CPUModel != "" || h.Cores != 0 || h.Sockets != 0 || h.MemoryBytes != 0 ||
		h.OS != "" || h.Kernel != "" || h.Virtualization != "" || h.Architecture != runtime.GOARCH {
		t.Errorf("host from empty roots: %+v", h)
	}
	tg := env.Target
	if tg.MountOptions != "" || len(tg.Devices) != 2 {
		t.Fatalf("target from empty roots: %+v", tg)
	}
	for _, d := range tg.Devices {
		if d != (stored.Device{Name: d.Name}) {
			t.Errorf("device from empty roots: %+v", d)
		}
	}
}

func TestInventoryResolveFailure(t *testing.T) {
	o := vmOptions(t, "/nowhere", telemetry.Resolution{})
	o.Resolve = func(path string) (telemetry.Resolution, error) {
		return telemetry.Resolution{Path: path}, errors.New("stat /nowhere: permission denied")
	}
	env, notes := Collect(context.Background(), o)
	if env.Target == nil || env.Target.Path != "/nowhere" || !strings.Contains(env.Target.Note, "permission denied") {
		t.Errorf("target %+v", env.Target)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "/nowhere") {
		t.Errorf("notes %q, want one naming the path", notes)
	}
}

// fakeDB is an engine.DB; only Settings is ever called.
type fakeDB struct {
	engine.DB
	version  string
	settings []stored.Setting
	err      error
}

func (f *fakeDB) Settings(context.Context) (string, []stored.Setting, error) {
	return f.version, f.settings, f.err
}

// plainDB does not report its settings.
type plainDB struct{ engine.DB }

func TestInventoryDatabase(t *testing.T) {
	ctx := context.Background()
	settings := []stored.Setting{{Name: "shared_buffers", Value: "128MB"}, {Name: "fsync", Value: "on"}}
	env, notes := Collect(ctx, Options{DB: &fakeDB{version: "16.4", settings: settings}, Engine: "postgres"})
	if len(notes) != 0 {
		t.Errorf("notes: %q", notes)
	}
	d := env.Database
	if d == nil || d.Engine != "postgres" || d.Version != "16.4" || len(d.Settings) != 2 || d.Settings[0] != settings[0] {
		t.Errorf("database %+v", d)
	}

	env, notes = Collect(ctx, Options{DB: &fakeDB{err: errors.New("the server said: too many connections")}, Engine: "postgres"})
	if env.Database == nil || env.Database.Engine != "postgres" || env.Database.Version != "" {
		t.Errorf("database %+v after a refusal", env.Database)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "too many connections") {
		t.Errorf("notes %q", notes)
	}

	env, notes = Collect(ctx, Options{DB: plainDB{}, Engine: "sqlite"})
	if env.Database == nil || env.Database.Engine != "sqlite" || len(notes) != 1 {
		t.Errorf("database %+v, notes %q", env.Database, notes)
	}
}

func TestInventoryVirtualizationSigns(t *testing.T) {
	flags := func(hyper bool) cpuInfo { return cpuInfo{hasFlags: true, hypervisorFlag: hyper} }
	cases := []struct {
		name  string
		files map[string]string // under one root serving as proc and sys
		cpu   cpuInfo
		want  string
	}{
		{"bare metal", map[string]string{"class/dmi/id/sys_vendor": "Dell Inc.", "class/dmi/id/product_name": "PowerEdge R750"}, flags(false), "none"},
		{"hyper-v", map[string]string{"class/dmi/id/sys_vendor": "Microsoft Corporation", "class/dmi/id/product_name": "Virtual Machine"}, flags(true), "microsoft"},
		{"vmware", map[string]string{"class/dmi/id/sys_vendor": "VMware, Inc.", "class/dmi/id/product_name": "VMware7,1"}, flags(true), "vmware"},
		{"ec2", map[string]string{"class/dmi/id/sys_vendor": "Amazon EC2", "class/dmi/id/product_name": "m6i.large"}, flags(true), "amazon"},
		{"qemu without kvm", map[string]string{"class/dmi/id/sys_vendor": "QEMU"}, flags(true), "qemu"},
		{"flag, no vendor", nil, flags(true), "unknown hypervisor"},
		{"flag and kvm-clock", map[string]string{"devices/system/clocksource/clocksource0/available_clocksource": "kvm-clock tsc"}, flags(true), "kvm"},
		{"xen pv", map[string]string{"hypervisor/type": "xen"}, cpuInfo{}, "xen"},
		{"docker", map[string]string{"1/cgroup": "12:pids:/docker/0123abcd\n0::/docker/0123abcd"}, flags(true), "docker"},
		{"lxc by environ", map[string]string{"1/environ": "PATH=/bin\x00container=lxc\x00"}, flags(true), "lxc"},
		{"no flags line, no dmi", nil, cpuInfo{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range c.files {
				path := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := virtualization(context.Background(), root, root, c.cpu, false); got != c.want {
				t.Errorf("virtualization %q, want %q", got, c.want)
			}
		})
	}
}

func TestInventoryDetectVirtOutput(t *testing.T) {
	exit := exec.Command("false").Run() // an *exec.ExitError, as systemd-detect-virt's "none" comes with
	cases := []struct {
		out    string
		err    error
		want   string
		wantOK bool
	}{
		{"kvm\n", nil, "kvm", true},
		{"none\n", exit, "none", true},
		{"", exit, "", false},
		{"", errors.New("exec: not found"), "", false},
		{"none\n", errors.New("signal: killed"), "", false},
	}
	for _, c := range cases {
		if got, ok := parseDetectVirt(c.out, c.err); got != c.want || ok != c.wantOK {
			t.Errorf("parseDetectVirt(%q, %v) = %q, %v; want %q, %v", c.out, c.err, got, ok, c.want, c.wantOK)
		}
	}
}

func TestInventoryParsers(t *testing.T) {
	for list, want := range map[string]int{"0-3": 4, "0": 1, "0-3,6,8-9": 7, "": 0, "x": 0, "3-1": 0} {
		path := filepath.Join(t.TempDir(), "online")
		if err := os.WriteFile(path, []byte(list+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := onlineCPUs(path); got != want {
			t.Errorf("onlineCPUs(%q) = %d, want %d", list, got, want)
		}
	}
	for list, want := range map[string]string{
		"[mq-deadline] none": "mq-deadline", "none [bfq]": "bfq", "none": "none", "none kyber": "", "": "",
	} {
		if got := selected(list); got != want {
			t.Errorf("selected(%q) = %q, want %q", list, got, want)
		}
	}
}

// TestCollectLiveMachine describes the machine the test runs on.
func TestCollectLiveMachine(t *testing.T) {
	env, notes := Collect(context.Background(), Options{Target: "/", TierbenchVersion: "test"})
	h := env.Host
	if h.Cores != runtime.NumCPU() {
		t.Errorf("cores %d, runtime.NumCPU() %d", h.Cores, runtime.NumCPU())
	}
	if h.MemoryBytes <= 0 {
		t.Errorf("memory %d", h.MemoryBytes)
	}
	if h.Kernel == "" {
		t.Error("kernel unknown")
	}
	if env.Target == nil || env.Target.MountPoint != "/" {
		t.Errorf("target %+v", env.Target)
	}
	b, _ := json.MarshalIndent(env, "", "  ")
	t.Logf("notes %q\n%s", notes, b)
}
