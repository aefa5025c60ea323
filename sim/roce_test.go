package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// roceIncast is an incast of senders into one port of a PFC switch on
// Ethernet links, with IFA probes and a tap on every host.
func roceIncast(senders, gbps, xoffBytes, quanta int, refreshNs int64) *Scenario {
	s := &Scenario{Name: fmt.Sprintf("roce-%dx-%dG-xoff%d-q%d", senders, gbps, xoffBytes, quanta), Seed: 1,
		LinkLayer: LinkEthernet, Gbps: gbps, MTUBytes: 4096,
		Switches: []Switch{{Name: "sw", PFC: &PFC{XOFFBytes: xoffBytes, XONBytes: xoffBytes / 2, HeadroomBytes: 32768,
			PauseQuanta: quanta, RefreshNs: refreshNs}}}}
	for i := 1; i <= senders; i++ {
		name := fmt.Sprintf("s%d", i)
		s.Hosts = append(s.Hosts, Host{Name: name})
		s.Links = append(s.Links, Link{A: name, B: "sw"})
		s.Flows = append(s.Flows, Flow{Src: name, Dst: "r", Bytes: 1 << 20, StartNs: 1000 + int64(i-1)*2000, IFAEvery: 8})
		s.Taps = append(s.Taps, Tap{Port: name + "/1", File: name + ".pcapng"})
	}
	s.Hosts = append(s.Hosts, Host{Name: "r"})
	s.Links = append(s.Links, Link{A: "sw", B: "r"})
	s.Taps = append(s.Taps, Tap{Port: "r/1", File: "r.pcapng"})
	return s
}

// readTap decodes every frame of a tap, failing on any that does not
// decode or whose ICRC is wrong.
func readTap(t *testing.T, path string, each func(f *decode.Frame)) {
	t.Helper()
	rd, err := decode.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var f decode.Frame
	for {
		err := rd.Next(&f)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			t.Fatalf("%s: %v", path, err)
		}
		if f.Has&decode.HasICRC != 0 && (f.Has&decode.CRCsCheck == 0 || !f.ICRCOK) {
			t.Fatalf("%s: frame %d: ICRC not checked or wrong", path, f.Number)
		}
		each(&f)
	}
}

// TestRoCETruthMatchesFrames: over a sweep of rates, thresholds, pause
// times and fan-in, what the taps show agrees with truth.json: the pause
// time each sender's priority 0 was under, summed from the PFC frames it
// received (each pauses for its quanta from its arrival, an XON ends it),
// and each IFA probe's hops as the receiver sees them.
func TestRoCETruthMatchesFrames(t *testing.T) {
	for _, c := range []struct {
		senders, gbps, xoff, quanta int
		refreshNs                   int64
	}{
		{2, 100, 40000, 1000, 0},   // refreshed at half the pause time: pauses end by XON
		{3, 25, 20000, 65535, 0},   // long pauses, three senders
		{4, 100, 60000, 200, 4000}, // refresh slower than the pause: some pauses expire
		{2, 400, 30000, 3000, 0},
	} {
		s := roceIncast(c.senders, c.gbps, c.xoff, c.quanta, c.refreshNs)
		t.Run(s.Name, func(t *testing.T) {
			dir := t.TempDir()
			tr, err := Run(s, dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Pauses) == 0 {
				t.Fatal("no pauses: the incast never passed XOFF")
			}
			// A refresh slower than the pause lets the senders go between
			// pauses, and the queue past the headroom: truth counts the
			// frames a real switch would drop.
			var overflows uint64
			for _, p := range tr.Ports {
				if p.PFC != nil {
					overflows += p.PFC.HeadroomOverflows
				}
			}
			if (overflows > 0) != (c.refreshNs > 0) {
				t.Errorf("%d headroom overflows, refresh_ns %d", overflows, c.refreshNs)
			}
			ends := map[string]int{}
			for _, p := range tr.Pauses {
				ends[p.End]++
			}
			if c.refreshNs > 0 && ends[PauseEndExpiry] == 0 {
				t.Errorf("refresh slower than the pause, yet no pause expired: %v", ends)
			}
			for i := 1; i <= c.senders; i++ {
				port := fmt.Sprintf("s%d/1", i)
				want := tr.Port(port).PausedNs[0]
				got := pausedFromFrames(t, filepath.Join(dir, fmt.Sprintf("s%d.pcapng", i)), int64(c.gbps)*1e9)
				if want == 0 || math.Abs(float64(got-want)) > 0.05*float64(want) {
					t.Errorf("%s paused %d ns by its PFC frames, truth %d ns (%v)", port, got, want, ends)
				}
			}
			checkProbes(t, filepath.Join(dir, "r.pcapng"), tr)
		})
	}
}

// pausedFromFrames sums the time priority 0 of a sender was paused, from
// the PFC frames its tap saw arrive.
func pausedFromFrames(t *testing.T, path string, bitsPerSec int64) int64 {
	var total, startNs, untilNs int64 = 0, -1, -1
	readTap(t, path, func(f *decode.Frame) {
		if f.Has&decode.HasPFC == 0 || f.Iface != IfaceRx || !f.PFC.Enabled(0) {
			return
		}
		now := f.TsNs
		if startNs >= 0 && untilNs <= now { // expired before this frame
			total += untilNs - startNs
			startNs = -1
		}
		q := f.PFC.Quanta[0]
		if q == 0 {
			if startNs >= 0 {
				total += now - startNs
				startNs = -1
			}
			return
		}
		if startNs < 0 {
			startNs = now
		}
		untilNs = now + decode.PauseNs(q, bitsPerSec)
	})
	if startNs >= 0 {
		total += untilNs - startNs
	}
	return total
}

// checkProbes compares the probes the receiver's tap saw with truth.json's:
// the same probes, in order, each hop's residence time and queue depth
// exactly.
func checkProbes(t *testing.T, path string, tr *Truth) {
	t.Helper()
	n := 0
	readTap(t, path, func(f *decode.Frame) {
		if f.Has&decode.HasIFAMetadata == 0 || f.Iface != IfaceRx {
			return
		}
		if n >= len(tr.Probes) {
			t.Fatalf("more probes at the receiver than truth's %d", len(tr.Probes))
		}
		want := tr.Probes[n]
		n++
		m := &f.IFAMetadata
		if m.Hops() != len(want.Hops) || f.BTH.PSN != want.PSN || f.BTH.DestQP != tr.Flows[want.Flow].DestQP {
			t.Fatalf("probe %d: %d hops, PSN %d; truth %+v", n, m.Hops(), f.BTH.PSN, want)
		}
		for i, w := range want.Hops {
			h := m.Hop(len(want.Hops) - 1 - i) // newest first
			q := int(binary.BigEndian.Uint32(h.Opaque[:4]))
			rxNs := int64(w.RxNs/1e9&0xFFFFF)*1e9 + w.RxNs%1e9
			if int64(h.ResidenceNs) != w.ResidenceNs || q != w.QueueBytes || h.DeviceID != w.DeviceID ||
				int64(h.RxTimeSec)*1e9+int64(h.RxTimeNs) != rxNs {
				t.Fatalf("probe %d hop %d: %+v, queue %d; truth %+v", n, i, h, q, w)
			}
		}
	})
	if n != len(tr.Probes) || n == 0 {
		t.Errorf("%d probes at the receiver, truth lists %d", n, len(tr.Probes))
	}
}
