package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestStartGCGoesBackToDefault: startGC's larger first goal lasts one
// cycle; after it the collector runs at the default GOGC=100 again (a run
// that grows is collected as usual), and a GOGC the user set is left alone.
func TestStartGCGoesBackToDefault(t *testing.T) {
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC") // t.Setenv restores it afterwards
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	startGC()
	if got := gogc(); got != startGCPercent {
		t.Fatalf("after startGC: GOGC %d, want %d", got, startGCPercent)
	}
	// The finalizer runs on its own goroutine after the cycle: wait for it
	// with a generous deadline, collecting again meanwhile.
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		got := gogc()
		if got == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still %d 30 s after the first cycle, want 100", got)
		}
		time.Sleep(10 * time.Millisecond)
	}

	os.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	startGC()
	if got := gogc(); got != 50 {
		t.Errorf("with GOGC=50 set: startGC changed GOGC to %d", got)
	}
}

// gogc is the collector's GOGC now, read without setting it.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
