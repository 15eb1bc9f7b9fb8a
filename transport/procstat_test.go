package transport

import (
	"runtime"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	line := "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0"
	st, pgrp, ok := parseProcStat(line)
	if !ok || st.Pid != 4242 || st.Name != "my (odd) name" || st.State != ProcSleeping || pgrp != 4242 || st.CPU != 3*time.Second {
		t.Fatalf("parseProcStat = %+v, %d, %v", st, pgrp, ok)
	}
	for _, bad := range []string{"", "x (a) S", "12 (a) S 1 2", "12 (a) SS 1 2 3 4 5 6 7 8 9 10 11 12", "12 a) R 1 2 3 4 5 6 7 8 9 10 11 12"} {
		if _, _, ok := parseProcStat(bad); ok {
			t.Errorf("parseProcStat(%q) accepted", bad)
		}
	}
	for c, want := range map[byte]ProcState{'R': ProcRunning, 'D': ProcDiskWait, 'T': ProcStopped, 'Z': ProcZombie, '?': ProcUnknown} {
		if got := linuxState(c); got != want {
			t.Errorf("linuxState(%c) = %s, want %s", c, got, want)
		}
	}
}

// TestParseStatFields: the walks' reading of a stat line, which allocates
// nothing, agrees with parseProcStat on the process group and finds the
// parent and the start time (field 22) past a name with spaces and
// parentheses.
func TestParseStatFields(t *testing.T) {
	line := "4242 (my ) (odd) name) S 17 4243 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 987654 0 0\n"
	f, ok := parseStatFields([]byte(line))
	if !ok || f.ppid != 17 || f.pgrp != 4243 || f.start != 987654 {
		t.Fatalf("parseStatFields = %+v, %v", f, ok)
	}
	if n := testing.AllocsPerRun(100, func() { parseStatFields([]byte(line)) }); n != 0 {
		t.Errorf("parseStatFields allocates %v times", n)
	}
	for _, bad := range []string{"", "12 (a) S 1 2", "12 (a) S 1 -2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", "12 (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x9"} {
		if _, ok := parseStatFields([]byte(bad)); ok {
			t.Errorf("parseStatFields(%q) accepted", bad)
		}
	}
}

// FuzzParseStatFields: wherever both read a line, the walks' reading and
// parseProcStat agree on its process group.
func FuzzParseStatFields(f *testing.F) {
	f.Add("4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0")
	f.Fuzz(func(t *testing.T, line string) {
		sf, ok1 := parseStatFields([]byte(line))
		_, pgrp, ok2 := parseProcStat(line)
		if ok1 && ok2 && sf.pgrp != pgrp {
			t.Fatalf("%q: pgrp %d, parseProcStat %d", line, sf.pgrp, pgrp)
		}
	})
}

func TestParsePSLine(t *testing.T) {
	for _, c := range []struct {
		line string
		cpu  time.Duration
		st   ProcState
		name string
	}{
		{"  311   311 Ss     0:01.50 /usr/local/bin/node", 1500 * time.Millisecond, ProcSleeping, "node"},
		{"  312   311 R+   1:02:03.00 my server", time.Hour + 2*time.Minute + 3*time.Second, ProcRunning, "my server"},
		{"  313   311 T    2-00:00:01 x", 48*time.Hour + time.Second, ProcStopped, "x"},
		{"  314   311 Z    0:00.00 (node)", 0, ProcZombie, "(node)"},
	} {
		st, _, ok := parsePSLine(c.line)
		if !ok || st.CPU != c.cpu || st.State != c.st || st.Name != c.name {
			t.Errorf("parsePSLine(%q) = %+v, %v", c.line, st, ok)
		}
	}
	for _, bad := range []string{"", "1 2 S", "1 2 S NaN:00 x", "1 2 S 0:61 x", "a 2 S 0:01 x", "1 2 S -1:00 x"} {
		if _, _, ok := parsePSLine(bad); ok {
			t.Errorf("parsePSLine(%q) accepted", bad)
		}
	}
}

// fuzzParser checks that parse never accepts a line as a process with no
// pid or a negative CPU time.
func fuzzParser(f *testing.F, parse func(string) (ProcStat, int, bool), seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if st, _, ok := parse(line); ok && (st.Pid <= 0 || st.CPU < 0) {
			t.Fatalf("accepted %q as %+v", line, st)
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	fuzzParser(f, parseProcStat, "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0", "1 () R 0 0 0 0 0 0 0 0 0 0 0 0")
}

func FuzzParsePSLine(f *testing.F) {
	fuzzParser(f, parsePSLine, "  312   311 R+   1:02:03.00 my server", "1 1 S 2-00:00:01 x")
}

// TestStatGroup reads a real process: a sleeping one, then the same pid
// once it has ended.
func TestStatGroup(t *testing.T) {
	p := startSleep(t)
	var sts []ProcStat
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if sts, err = StatGroup(p.Pid()); err == nil && len(sts) > 0 && sts[0].State == ProcSleeping {
			break
		}
	}
	if err != nil || len(sts) == 0 || sts[0].Pid != p.Pid() || sts[0].State != ProcSleeping || sts[0].Name != "sleep" {
		t.Fatalf("StatGroup(sleep) = %+v, %v", sts, err)
	}
	p.Kill()
	p.Wait()
	if sts, err = StatGroup(p.Pid()); err != nil || sts[0].State != ProcGone {
		t.Fatalf("StatGroup(ended) = %+v, %v", sts, err)
	}
}

func TestThreadsState(t *testing.T) {
	for _, c := range []struct {
		own     ProcState
		threads []ProcState
		want    ProcState
	}{
		{ProcSleeping, []ProcState{ProcSleeping, ProcRunning}, ProcRunning},
		{ProcSleeping, []ProcState{ProcSleeping, ProcDiskWait}, ProcDiskWait},
		{ProcSleeping, nil, ProcSleeping},
		{ProcStopped, []ProcState{ProcRunning}, ProcStopped},
		{ProcZombie, []ProcState{ProcRunning}, ProcZombie},
	} {
		if got := threadsState(c.own, c.threads); got != c.want {
			t.Errorf("threadsState(%s, %v) = %s, want %s", c.own, c.threads, got, c.want)
		}
	}
	if w, ok := parseSchedstat("385855 44016 1\n"); !ok || w != 44016 {
		t.Errorf("parseSchedstat = %v, %v", w, ok)
	}
	if _, ok := parseSchedstat("1"); ok {
		t.Error("parseSchedstat accepted one field")
	}
}

// BenchmarkStatGroup is the cost of one reading of a server's processes:
// the /proc scan a timeout (and, at most once a second, a new request's
// CPU baseline) pays.
func BenchmarkStatGroup(b *testing.B) {
	p := startSleep(b)
	for b.Loop() {
		if _, err := StatGroup(p.Pid()); err != nil {
			b.Fatal(err)
		}
	}
}

// startSleep starts a sleeping process to read, ended by the test's
// cleanup; it skips where process groups are not read.
func startSleep(tb testing.TB) *Process {
	tb.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		tb.Skip("process groups are read on Linux and macOS")
	}
	p, err := StartProcess(ProcessConfig{Argv: []string{"sleep", "30"}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Kill(); p.Wait() })
	return p
}
