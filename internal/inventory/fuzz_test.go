package inventory

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// FuzzCountCPUs: a cpu list counts 0 or more CPUs, never more than
// maxCPUs, and a list of n single CPUs counts n.
func FuzzCountCPUs(f *testing.F) {
	for _, s := range []string{"0-3", "0", "0-3,6,8-9", "", "x", "3-1", "-1", "0--3", "0-", ",", "0,,1", "0-9223372036854775807",
		"1-9223372036854775807,0-9223372036854775807", "0-1048575", "0-1048576", "+1", " 0-3", "0-3\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		n := countCPUs(strings.TrimSpace(list))
		if n < 0 || n > maxCPUs {
			t.Fatalf("onlineCPUs(%q) = %d", list, n)
		}
		if n == 0 || n > 1000 {
			return
		}
		singles := make([]string, n)
		for i := range singles {
			singles[i] = fmt.Sprint(i)
		}
		if m := countCPUs(strings.Join(singles, ",")); m != n {
			t.Fatalf("onlineCPUs(%q) = %d, but its %d single CPUs count %d", list, n, n, m)
		}
	})
}

// FuzzParseMemTotal: MemTotal reads as 0 (unknown) or a positive number of
// bytes; never negative, whatever the number or its unit.
func FuzzParseMemTotal(f *testing.F) {
	for _, s := range []string{"MemTotal:       16384000 kB\nMemFree: 1 kB\n", "MemTotal: 5\n", "MemTotal:\n", "MemTotal: x kB\n",
		"MemTotal: -5 kB\n", "MemTotal: 9223372036854775807 kB\n", "MemTotal: 9007199254740992 KB\n", "", "MemFree: 1 kB\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n := parseMemTotal([]byte(s)); n < 0 {
			t.Fatalf("memTotal(%q) = %d", s, n)
		}
	})
}

// FuzzParseCPUInfo: any cpuinfo counts as many processors as it has
// "processor" lines, and the model is one of its values, on one line.
func FuzzParseCPUInfo(f *testing.F) {
	for _, s := range []string{"processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu hypervisor\nphysical id\t: 0\n\nprocessor\t: 1\n",
		"Processor\t: ARMv7 Processor rev 4 (v7l)\n", "cpu\t\t: POWER9\n", "", ":\n", "model name:\n", "flags: hypervisorx\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := parseCPUInfo([]byte(s))
		if c.processors < 0 || c.processors > strings.Count(s, "processor") {
			t.Fatalf("readCPUInfo(%q): %d processors", s, c.processors)
		}
		if strings.ContainsAny(c.model, "\n") || (c.model != "" && !strings.Contains(s, c.model)) {
			t.Fatalf("readCPUInfo(%q): model %q", s, c.model)
		}
		if c.hypervisorFlag && !c.hasFlags {
			t.Fatalf("readCPUInfo(%q): a hypervisor flag without flags", s)
		}
	})
}

// FuzzParseOSRelease: every variable of os-release has a name, and no
// value spans lines, whatever escapes it holds.
func FuzzParseOSRelease(f *testing.F) {
	for _, s := range []string{"PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n",
		"NAME='Alpine'\n", "# comment\nNAME=x\n", "=\n", "NAME=\"unterminated\n", "NAME=\"a\\\"b\"\n", "", "NAME\n", "NAME=\"\\x0A\"\n", "NAME=\"\\n\"\n", "=x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for k, v := range parseOSRelease([]byte(s)) {
			if k == "" || strings.ContainsAny(k, "\n=") || strings.HasPrefix(k, "#") {
				t.Fatalf("parseOSRelease(%q): variable %q", s, k)
			}
			if strings.ContainsAny(v, "\n") || len(v) > len(s) {
				t.Fatalf("parseOSRelease(%q): %s=%q", s, k, v)
			}
		}
	})
}

// FuzzParseDetectVirt: systemd-detect-virt's answer is taken only when it
// is one word, and "none" only with the exit status it comes with.
func FuzzParseDetectVirt(f *testing.F) {
	for _, s := range []string{"kvm\n", "none\n", "", "two words\n", "docker", " \n"} {
		f.Add(s, 0)
		f.Add(s, 1)
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, out string, kind int) {
		var err error
		switch kind % 3 {
		case 1:
			err = &exec.ExitError{}
		case 2:
			err = errors.New("signal: killed")
		}
		v, ok := parseDetectVirt(out, err)
		if !ok {
			if v != "" {
				t.Fatalf("parseDetectVirt(%q, %v) = %q but not ok", out, err, v)
			}
			return
		}
		if v == "" || strings.ContainsAny(v, " \t\n\r") || v != strings.TrimSpace(out) {
			t.Fatalf("parseDetectVirt(%q, %v) = %q", out, err, v)
		}
		if err != nil && v != "none" {
			t.Fatalf("parseDetectVirt(%q, %v) = %q despite the failure", out, err, v)
		}
	})
}

// FuzzSelected: the chosen entry of a sysfs choice list is a part of it,
// the bracketed one when there is one.
func FuzzSelected(f *testing.F) {
	for _, s := range []string{"[mq-deadline] none", "none [bfq]", "none", "none kyber", "", "[", "[]", "]x[", "[[x]", "[a] [b]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got := selected(list)
		if !strings.Contains(list, got) {
			t.Fatalf("selected(%q) = %q", list, got)
		}
		if got != "" && !strings.Contains(list, "["+got+"]") && len(strings.Fields(list)) != 1 {
			t.Fatalf("selected(%q) = %q, neither bracketed nor the only entry", list, got)
		}
	})
}
