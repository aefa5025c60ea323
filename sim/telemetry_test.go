package sim

import (
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/telemetry"
)

// TestTelemetryReadable: what the simulator writes, the telemetry readers
// read, and PortXmitWait in it matches the truth.
func TestTelemetryReadable(t *testing.T) {
	s := smallIncast()
	s.Telemetry.SysfsDir = "sysfs"
	s.Telemetry.SidecarDir = "sidecars"
	dir := t.TempDir()
	tr, err := Run(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := tr.Port("s1/1").XmitWaitTicks
	lastWait := func(s *telemetry.Series) uint64 {
		col := s.Col(telemetry.PortXmitWait)
		if col < 0 {
			t.Fatalf("%s: no %s column", s.Source, telemetry.PortXmitWait)
		}
		return s.Value(s.Len()-1, col)
	}

	pq, err := telemetry.ReadFile(filepath.Join(dir, "perfquery.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pq) != len(tr.Ports) {
		t.Errorf("perfquery: %d series, want one per port (%d)", len(pq), len(tr.Ports))
	}
	for _, s := range pq {
		if s.Source.Device == "lid:1" && s.Source.Port == 1 {
			if got := lastWait(s); got != want {
				t.Errorf("perfquery s1/1 PortXmitWait %d, truth %d", got, want)
			}
			if s.Clock != telemetry.ClockHost || s.Len() != tr.Telemetry.Samples || s.StartNs[0] != tr.StartNs {
				t.Errorf("perfquery s1/1: clock %v, %d samples from %d; want host clock, %d samples from %d",
					s.Clock, s.Len(), s.StartNs[0], tr.Telemetry.Samples, tr.StartNs)
			}
		}
	}

	sc, err := telemetry.ReadFile(filepath.Join(dir, "sidecars", "s1-1.telemetry.csv"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := lastWait(sc[0]); got != want || sc[0].Len() != tr.Telemetry.Samples {
		t.Errorf("sidecar s1/1: PortXmitWait %d over %d samples, truth %d over %d", got, sc[0].Len(), want, tr.Telemetry.Samples)
	}

	ss, err := telemetry.ReadSysfs(filepath.Join(dir, "sysfs"), "s1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := lastWait(ss); got != want {
		t.Errorf("sysfs s1/1 PortXmitWait %d, truth %d", got, want)
	}
}
