package stored

import "testing"

// Each kind's parameters decode as its type, with the placement, noisy
// judgement and engine they carry; a kind this version does not know
// decodes as none.
func TestDecodeParams(t *testing.T) {
	p, err := DecodeParams(KindTPCC, []byte(`{"engine":"mariadb","warehouses":4,"vus":[1,2],"noisy_limits":{"steal_pct":5},"discard_noisy":true,`+
		`"label":"db-1","instance":"db-1","scenario_host":"h1","role":"tpcc","phase":"baseline","scenario_target":"fast","tier":"3000 IOPS",`+
		`"limits":{"cgroup_version":2,"memory_max_bytes":268435456},"server_memory_bytes":268435456}`))
	if err != nil || p.TPCC == nil || p.Disk != nil {
		t.Fatalf("%+v, %v", p, err)
	}
	pl := p.Placement
	if pl != (Placement{Label: "db-1", Instance: "db-1", Host: "h1", Role: "tpcc", Phase: "baseline", Target: "fast", Tier: "3000 IOPS",
		Limits: pl.Limits, Memory: 256 << 20}) || pl.Limits == nil || pl.Limits.Version != 2 || pl.Limits.MemoryMax != 256<<20 {
		t.Errorf("placement %+v", pl)
	}
	if n := p.Noisy; !n.Discard || n.Limits.StealPct != 5 || p.Engine() != "mariadb" || p.TPCC.Warehouses != 4 || len(p.TPCC.VUs) != 2 {
		t.Errorf("noisy %+v, engine %q, %+v", n, p.Engine(), p.TPCC)
	}

	p, err = DecodeParams(KindDisk, []byte(`{"profile":"quick","engine":"psync","label":"nvme"}`))
	if err != nil || p.Disk == nil || p.Disk.LegacyIOEngine != "psync" || p.Disk.IOEngine != "" || p.Placement.Label != "nvme" || p.Engine() != "" {
		t.Errorf("an older disk run: %+v, %v", p.Disk, err)
	}
	p, err = DecodeParams(KindDurability, []byte(`{"engine":"postgres","fault":"kill"}`))
	if err != nil || p.Durability == nil || p.Durability.Fault != "kill" || p.Engine() != "postgres" || p.Placement != (Placement{}) {
		t.Errorf("durability: %+v, %v", p.Durability, err)
	}
	if p, err := DecodeParams("future-kind", []byte(`{"x":1,"label":"l"}`)); err != nil || p != (Params{Placement: Placement{Label: "l"}}) {
		t.Errorf("an unknown kind: %+v, %v", p, err)
	}
	if _, err := DecodeParams(KindBackup, []byte(`{"cycles":"two"}`)); err == nil {
		t.Error("parameters that do not decode: no error")
	}
}

// The durability run's load in words, as the CLI and the report both say
// it: closed loop or offered rate, one VU or several.
func TestDurabilityLoadText(t *testing.T) {
	for _, c := range []struct {
		p    DurabilityParams
		want string
	}{
		{DurabilityParams{VUs: 4}, "4 VUs in a closed loop"},
		{DurabilityParams{VUs: 1, Rate: 1200}, "1,200 TPM offered to 1 VU"},
		{DurabilityParams{VUs: 8, Rate: 12000}, "12,000 TPM offered to 8 VUs"},
	} {
		if got := c.p.LoadText(); got != c.want {
			t.Errorf("%+v: %q; want %q", c.p, got, c.want)
		}
	}
}
