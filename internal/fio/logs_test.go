package fio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLogs writes name -> content files into a new temporary directory.
func writeLogs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLogs(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []Second
	}{
		{
			// Job 1 reads every second and writes in the first; job 2 has no
			// bw log and logs IOPS 0 in second 2, so its latency weighs nothing there.
			name: "two jobs",
			files: map[string]string{
				"p_iops.1.log": "1000, 100, 0, 4096, 0\n1000, 50, 1, 4096, 0\n1000, 7, 2, 4096, 0\n" +
					"2001, 200, 0, 4096, 0, 1\n2999, 300, 0, 4096, 0\n4000, 400, 0, 4096, 0\n",
				"p_bw.1.log": "1000, 1000, 0, 4096, 0\n1000, 500, 1, 4096, 0\n" +
					"2001, 2000, 0, 4096, 0\n2999, 3000, 0, 4096, 0\n4000, 4000, 0, 4096, 0\n",
				"p_clat.1.log": "1000, 100000, 0, 4096, 0\n1000, 2000000, 1, 4096, 0\n1000, 1, 2, 4096, 0\n" +
					"2001, 200000, 0, 4096, 0\n2999, 300000, 0, 4096, 0\n4000, 400000, 0, 4096, 0\n",
				"p_iops.2.log":  "1000, 300, 0, 4096, 0\n2001, 0, 0, 4096, 0\n",
				"p_clat.2.log":  "1000, 500000, 0, 4096, 0\n2001, 900000, 0, 4096, 0\n",
				"p_lat.1.log":   "not, a, log\n", // ignored
				"p_slat.1.log":  "not, a, log\n",
				"pp_iops.1.log": "1000, 999999, 0, 4096, 0\n", // another prefix
			},
			want: []Second{
				// (100*0.1 + 300*0.5) / 400 ms
				{T: 1, Read: &DirSecond{IOPS: 400, MBps: 1.024, ClatMs: 0.4}, Write: &DirSecond{IOPS: 50, MBps: 0.512, ClatMs: 2}},
				{T: 2, Read: &DirSecond{IOPS: 200, MBps: 2.048, ClatMs: 0.2}},
				{T: 3, Read: &DirSecond{IOPS: 300, MBps: 3.072, ClatMs: 0.3}},
				{T: 4, Read: &DirSecond{IOPS: 400, MBps: 4.096, ClatMs: 0.4}},
			},
		},
		{
			name: "no iops logs: plain mean latency",
			files: map[string]string{
				"p_clat.1.log": "1000, 100000, 1, 4096, 0\n",
				"p_clat.2.log": "1000, 300000, 1, 4096, 0\n",
			},
			want: []Second{{T: 1, Write: &DirSecond{ClatMs: 0.2}}},
		},
		{
			// fio's short last window (250 ms at 1000 IOPS) lands in the same
			// second as the full one: (200*1000 + 1000*250) / 1250.
			name: "short last window",
			files: map[string]string{
				"p_iops.1.log": "1000, 100, 0, 4096, 0\n2000, 200, 0, 4096, 0\n2250, 1000, 0, 4096, 0\n",
			},
			want: []Second{
				{T: 1, Read: &DirSecond{IOPS: 100}},
				{T: 2, Read: &DirSecond{IOPS: 360}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadLogs(filepath.Join(writeLogs(t, tt.files), "p"))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d seconds, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.T != w.T {
					t.Errorf("second %d: T = %d, want %d", i, g.T, w.T)
				}
				sameDir(t, g.T, "read", g.Read, w.Read)
				sameDir(t, g.T, "write", g.Write, w.Write)
			}
		})
	}
}

func sameDir(t *testing.T, sec int, name string, got, want *DirSecond) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Errorf("T=%d %s = %+v, want %+v", sec, name, got, want)
		return
	}
	if got != nil && (!near(got.IOPS, want.IOPS) || !near(got.MBps, want.MBps) || !near(got.ClatMs, want.ClatMs)) {
		t.Errorf("T=%d %s = %+v, want %+v", sec, name, *got, *want)
	}
}

func TestLogsErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no logs", map[string]string{"p_lat.1.log": "1000, 1, 0, 4096, 0\n", "other_iops.1.log": "1000, 1, 0, 4096, 0\n"}, "no "},
		{"bad line", map[string]string{"p_iops.1.log": "1000, 1, 0, 4096, 0\n2000, x, 0, 4096, 0\n"}, "p_iops.1.log:2"},
		{"short line", map[string]string{"p_bw.1.log": "1000\n"}, "p_bw.1.log:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadLogs(filepath.Join(writeLogs(t, tt.files), "p"))
			if err == nil || !strings.Contains(err.Error(), "fio logs") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
	if _, err := ReadLogs(filepath.Join(t.TempDir(), "missing", "p")); err == nil {
		t.Error("want an error for a missing directory")
	}
}
