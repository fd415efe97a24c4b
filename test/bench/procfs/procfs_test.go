package procfs

import (
	"os"
	"testing"
)

// This process's own entries read back as the kernel gives them: its
// parent, some CPU spent, a resident set no larger than its peak.
func TestReadsThisProcess(t *testing.T) {
	for i := 0; i < 2_000_000; i++ { // some CPU to count
		_ = i * i
	}
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getppid() {
		t.Fatalf("PPID %d, want %d", st.PPID, os.Getppid())
	}
	if st.CPU() < 0 || Tick() <= 0 {
		t.Fatalf("CPU %d ticks, tick %v", st.CPU(), Tick())
	}
	m := Status(os.Getpid())
	if m["VmRSS"] <= 0 || m["VmRSS"] > m["VmHWM"] || m["RssAnon"] <= 0 {
		t.Fatalf("status %v", m)
	}
	if mem := Meminfo(); mem["MemTotal"] <= 0 || mem["MemAvailable"] > mem["MemTotal"] {
		t.Fatalf("meminfo %v", mem)
	}
	if _, err := ReadStat(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}
