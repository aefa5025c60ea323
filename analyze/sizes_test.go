package analyze

import (
	"strings"
	"testing"
)

// Sizes a caller passes are range-checked before anything is allocated,
// and the error names the value and the range (commands name their flags).
func TestSizesRefused(t *testing.T) {
	check := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	_, err := OpenStream([]string{"x.pcap"}, StreamOptions{WindowPackets: 1_000_000_000})
	check("window", err, "reorder window of 1000000000 packets: want 1 to 1000000 packets")
	_, err = NewIPDAnalysis(IPDOptions{Phases: true, PhasePackets: 1_000_000_000}, func() int64 { return 1 })
	check("phase packets", err, "shortest phase of 1000000000 packets: want 1 to 65536 packets")
	_, err = runTick(nil, nil, "t.txt", TickOptions{MinPhasePackets: 1_000_000_000})
	check("tick phase packets", err, "shortest phase of 1000000000 packets")
	_, err = runTick(nil, nil, "t.txt", TickOptions{Iface: 300})
	check("tick interface", err, "interface 300: captures number interfaces 0 to 127")
	_, err = Credits(nil, CreditOptions{MaxPoints: 1_000_000_000})
	check("credits points", err, "time series of 1000000000 points: want 1 to 1000000")
	_, err = runBuffer(nil, nil, BufferOptions{MaxPoints: -1})
	check("buffer points", err, "time series of -1 points")
	_, err = runTick(nil, nil, "t.txt", TickOptions{MaxPackets: -1})
	check("tick packets", err, "bound of -1 packets kept: want 1 to 200000000")
	_, err = runBuffer(nil, nil, BufferOptions{MaxPackets: MaxPacketsLimit + 1})
	check("buffer packets", err, "bound of 200000001 packets kept")
	_, err = RunCompare(nil, nil, IPDOptions{}, 2*MaxMatchWindowNs, nil)
	check("match window", err, "match window of 2s: want at most 1s")
	check("linear bins", HistSpec{Mode: ModeLinear, BinNs: 1e18, Bins: 100}.Validate(1), "100 bins of 1000000000s end past")
	check("exp bins", HistSpec{Mode: ModeExp, BinNs: 1e9, Bins: 62}.Validate(1), "62 bins doubling from 1s end past")
	check("exp bin count", HistSpec{Mode: ModeExp, BinNs: 1, Bins: 63}.Validate(1), "at most 62 bins")
}

// A phase detector's blocks grow with the packets it sees: a detector
// asked for long phases costs nothing up front.
func TestPhaseDetectorLazy(t *testing.T) {
	d := newPhaseDetector(MaxPhasePackets)
	if cap(d.block) != 0 || d.scratch != nil {
		t.Errorf("new detector holds %d + %d IPDs", cap(d.block), len(d.scratch))
	}
	ts := make([]int64, 3*MaxPhasePackets)
	for i := range ts {
		ts[i] = int64(i) * 1000
	}
	if ph := detectPhases(ts, MaxPhasePackets); len(ph) != 1 || ph[0].Packets != len(ts) || ph[0].MedianIPDNs != 1000 {
		t.Errorf("phases %+v", ph)
	}
}
