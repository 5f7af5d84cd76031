package durability

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

func TestLogConcurrentAppendsAllDurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "success.log")
	l, err := CreateLog(path)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 2000
	var wg sync.WaitGroup
	for w := 1; w <= writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= each; i++ {
				l.Append(tpcc.Ack{W: w, D: i%10 + 1, OID: i, Customer: i % 3000, Lines: 5 + i%11, FirstItem: i * 7, RolledBack: i%100 == 0})
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("log mode %v, %v; want 0600", fi.Mode(), err)
	}
	acks, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(acks) != writers*each {
		t.Fatalf("read %d entries, want %d", len(acks), writers*each)
	}
	// Each writer's entries keep their order, and every field survives.
	next := map[int]int{}
	rolledBack := 0
	for _, a := range acks {
		next[a.W]++
		i := next[a.W]
		want := tpcc.Ack{W: a.W, D: i%10 + 1, OID: i, Customer: i % 3000, Lines: 5 + i%11, FirstItem: i * 7, RolledBack: i%100 == 0}
		if a != want {
			t.Fatalf("entry %+v, want %+v", a, want)
		}
		if a.RolledBack {
			rolledBack++
		}
	}
	if rolledBack != writers*each/100 {
		t.Fatalf("%d rolled back, want %d", rolledBack, writers*each/100)
	}
}

func TestLogRefusesExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateLog(path); err == nil {
		t.Fatal("CreateLog over an existing file: no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Fatalf("the existing file was changed: %q", b)
	}
}

func TestReadLogTornAndMalformed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	acks, err := ReadLog(write("torn", "1 2 3 4 5 6 C\n2 3 4 5 6 7 R\n3 4 5"))
	if err != nil || len(acks) != 2 || !acks[1].RolledBack || acks[1].FirstItem != 7 {
		t.Fatalf("torn log: %+v, %v; want the two whole entries", acks, err)
	}
	for name, s := range map[string]string{
		"fields":   "1 2 3 4 5 C\n",
		"verdict":  "1 2 3 4 5 6 X\n",
		"number":   "1 2 x 4 5 6 C\n",
		"negative": "1 2 -3 4 5 6 C\n",
	} {
		_, err := ReadLog(write(name, "1 1 1 1 5 1 C\n"+s))
		if err == nil || !strings.Contains(err.Error(), ":2:") {
			t.Errorf("%s: error %v, want one naming line 2", name, err)
		}
	}
}

func TestJudge(t *testing.T) {
	acks := []tpcc.Ack{{W: 1, OID: 1}, {W: 1, OID: 2}, {W: 1, OID: 3, RolledBack: true}, {W: 1, OID: 3}}
	ok := &tpcc.CheckResult{OK: true, Conditions: []tpcc.Condition{{ID: "3.3.2.3", OK: true}}}
	cases := []struct {
		name            string
		count2          int64 // count1 is 100
		bad             []tpcc.Ack
		check           *tpcc.CheckResult
		lost, rbFound   int64
		excess          int64
		ok              bool
		problemContains string
	}{
		{name: "all there", count2: 103, check: ok, ok: true},
		{name: "in flight committed", count2: 105, check: ok, excess: 2, ok: true},
		{name: "too many in flight", count2: 106, check: ok, excess: 3, problemContains: "never acknowledged"},
		{name: "counter behind", count2: 102, check: ok, excess: -1, problemContains: "fewer"},
		{name: "lost", count2: 103, bad: acks[:1], check: ok, lost: 1, problemContains: "1 committed New-Orders lost"},
		{name: "rolled back found", count2: 103, bad: acks[2:3], check: ok, rbFound: 1, problemContains: "rolled-back"},
		{name: "inconsistent", count2: 103, check: &tpcc.CheckResult{Conditions: []tpcc.Condition{{ID: "3.3.2.3"}}},
			problemContains: "3.3.2.3"},
	}
	for _, c := range cases {
		res := &stored.DurabilityCycle{Count1: 100, Count2: c.count2, ExcessBound: 2}
		judge(res, acks, c.bad, c.check)
		if res.Committed != 3 || res.RolledBack != 1 || res.Acknowledged != 4 {
			t.Errorf("%s: counts %+v", c.name, res)
		}
		if res.Lost != c.lost || res.RolledBackFound != c.rbFound || res.Excess != c.excess || res.OK != c.ok ||
			res.Found != 3-c.lost {
			t.Errorf("%s: lost %d, rolled back found %d, excess %d, found %d, ok %v; want %d, %d, %d, %d, %v",
				c.name, res.Lost, res.RolledBackFound, res.Excess, res.Found, res.OK, c.lost, c.rbFound, c.excess, 3-c.lost, c.ok)
		}
		if got := strings.Join(res.Problems, "; "); !strings.Contains(got, c.problemContains) || (c.ok && got != "") {
			t.Errorf("%s: problems %q, want one with %q", c.name, got, c.problemContains)
		}
	}
	tot := Total([]*stored.DurabilityCycle{{OK: true, Committed: 5, Found: 5, RecoverySeconds: 2}, {Committed: 4, Found: 3, Lost: 1, Excess: 2, RecoverySeconds: 1}})
	if tot.OK || tot.FailedCycles != 1 || tot.Lost != 1 || tot.Committed != 9 || tot.MaxExcess != 2 || tot.MinRecovery != 1 || tot.MaxRecovery != 2 {
		t.Fatalf("Total = %+v", tot)
	}
}
