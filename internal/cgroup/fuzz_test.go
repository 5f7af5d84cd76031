package cgroup

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/stored"
)

// FuzzParseIOMax: io.max as the kernel (or anything else) writes it parses
// to limits that are sorted by device, one per device, none negative or
// unlimited, and that written back with ioMaxLine parse to the same limits.
// Errors are one line.
func FuzzParseIOMax(f *testing.F) {
	for _, s := range []string{"8:16 rbps=2097152 wbps=max riops=max wiops=120\n254:0 rbps=max wbps=max riops=max wiops=max\n7:0 riops=5\n",
		"", "\n", "8:16 rbps", "8:16 rbps=-1", "8:16 rbps=0", "8:16 x=1", "8 rbps=1", "8:16:1 rbps=1", "4294967296:0 rbps=1",
		"8:16 rbps=9223372036854775808", "8:0 riops=5\n8:0 riops=max\n", "8:0 riops=5\n8:0 wiops=7\n", "1:2 riops=3\n0:0 wbps=1\n",
		"8:16 rbps=1 rbps=2", "8:16\trbps=1\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := parseIOMax(s)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("parseIOMax(%q): error %q is not one line", s, msg)
			}
			return
		}
		var lines []string
		for i, l := range ls {
			if unlimited(l) || l.ReadBPS < 0 || l.WriteBPS < 0 || l.ReadIOPS < 0 || l.WriteIOPS < 0 {
				t.Fatalf("parseIOMax(%q) gave %+v", s, l)
			}
			if i > 0 {
				p := ls[i-1]
				if p.Major > l.Major || p.Major == l.Major && p.Minor >= l.Minor {
					t.Fatalf("parseIOMax(%q): %s after %s", s, l.Device(), p.Device())
				}
			}
			lines = append(lines, ioMaxLine(l))
		}
		back, err := parseIOMax(strings.Join(lines, "\n"))
		if err != nil || !reflect.DeepEqual(back, ls) {
			t.Fatalf("parseIOMax(%q) = %+v, written back parses as %+v, %v", s, ls, back, err)
		}
	})
}

// FuzzParseDevice: MAJ:MIN reads only as two numbers that print back the
// same way.
func FuzzParseDevice(f *testing.F) {
	for _, s := range []string{"8:16", "254:0", "0:0", "8", ":", "8:", ":16", "-1:0", "4294967296:0", "+8:16", "08:016", "8:16:0", " 8:16"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		maj, min, ok := parseDevice(s)
		if !ok {
			return
		}
		l := stored.IOLimit{Major: maj, Minor: min}
		if a, b, ok := parseDevice(l.Device()); !ok || a != maj || b != min {
			t.Fatalf("parseDevice(%q) = %d:%d, which reads back as %d:%d %v", s, maj, min, a, b, ok)
		}
	})
}

// FuzzParseOwn: /proc/self/cgroup reads without error (its lines are short),
// and the v2 line's path (0::PATH, the last one) is under "0".
func FuzzParseOwn(f *testing.F) {
	for _, s := range []string{"0::/user.slice/session-1.scope\n", "12:memory:/process_api/abc\n11:blkio:/\n1:name=systemd:/init.scope\n0::/\n",
		"", "garbage\n", "::\n", "0::/a:b\n", "4:cpu,cpuacct:/x\n0::/first\n0::/second\n", "0:memory:/x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		own, err := parseOwn(strings.NewReader(s))
		if err != nil {
			if len(s) > 60000 {
				return // a line longer than bufio.Scanner's 64 KiB: not /proc
			}
			t.Fatalf("readOwn(%q): %v", s, err)
		}
		want, has := "", false
		for _, line := range strings.Split(s, "\n") {
			line = strings.TrimSuffix(line, "\r") // as bufio.ScanLines
			if p, ok := strings.CutPrefix(line, "0::"); ok {
				want, has = p, true
			} else if _, rest, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(rest, "0:") {
				has = false // a v1 line of a controller named "0", which no kernel has
			}
		}
		if has && own["0"] != want {
			t.Fatalf("readOwn(%q)[\"0\"] = %q, want %q", s, own["0"], want)
		}
	})
}
