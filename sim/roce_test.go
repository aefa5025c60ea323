package sim_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/sim"
)

// roceIncast is an incast of senders into one port of a PFC switch on
// Ethernet links, each sender with a flow on each of prios priorities, with
// IFA probes (every 7th packet: a stride prime to the 256 packets of a
// message) and a tap on every host. Priorities past 0 pause at two thirds
// of the thresholds, for half the time.
func roceIncast(senders, gbps, xoffBytes, quanta int, refreshNs int64, prios int) *sim.Scenario {
	s := &sim.Scenario{Name: fmt.Sprintf("roce-%dx-%dG-xoff%d-q%d-p%d", senders, gbps, xoffBytes, quanta, prios), Seed: 1,
		LinkLayer: sim.LinkEthernet, Gbps: gbps, MTUBytes: 4096, VLs: prios,
		Switches: []sim.Switch{{Name: "sw", PFC: &sim.PFC{XOFFBytes: xoffBytes, XONBytes: xoffBytes / 2, HeadroomBytes: 32768,
			PauseQuanta: quanta, RefreshNs: refreshNs}}}}
	for n := 1; n < prios; n++ {
		s.Switches[0].PFC.Priorities = append(s.Switches[0].PFC.Priorities,
			sim.PFCPriority{Priority: n, XOFFBytes: xoffBytes * 2 / 3, XONBytes: xoffBytes / 3, PauseQuanta: max(1, quanta/2)})
	}
	for i := 1; i <= senders; i++ {
		name := fmt.Sprintf("s%d", i)
		s.Hosts = append(s.Hosts, sim.Host{Name: name})
		s.Links = append(s.Links, sim.Link{A: name, B: "sw"})
		for n := range prios {
			s.Flows = append(s.Flows, sim.Flow{Src: name, Dst: "r", Bytes: 1 << 20, StartNs: 1000 + int64(i-1)*2000, SL: n, IFAEvery: 7})
		}
		s.Taps = append(s.Taps, sim.Tap{Port: name + "/1", File: name + ".pcapng"})
	}
	s.Hosts = append(s.Hosts, sim.Host{Name: "r"})
	s.Links = append(s.Links, sim.Link{A: "sw", B: "r"})
	s.Taps = append(s.Taps, sim.Tap{Port: "r/1", File: "r.pcapng"})
	return s
}

// readTap decodes every frame of a tap, failing on any that does not
// decode or whose ICRC is wrong.
func readTap(t *testing.T, path string, each func(f *decode.Frame)) {
	t.Helper()
	rd, err := capfile.Open(path)
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
// times, priorities and fan-in, what the taps show agrees with truth.json:
// the pause time of each sender's priorities, summed from the PFC frames it
// received (each pauses for its quanta from its arrival, an XON ends it),
// and each IFA probe's hops as the receiver sees them; and so do the pfc and
// hops analyses of the taps, within 5 %.
func TestRoCETruthMatchesFrames(t *testing.T) {
	for _, c := range []struct {
		senders, gbps, xoff, quanta int
		refreshNs                   int64
		prios                       int
	}{
		{2, 100, 40000, 1000, 0, 1},   // refreshed at half the pause time: pauses end by XON
		{3, 25, 20000, 65535, 0, 1},   // long pauses, three senders
		{4, 100, 60000, 200, 4000, 1}, // refresh slower than the pause: some pauses expire
		{2, 400, 30000, 3000, 0, 1},
		{2, 100, 40000, 2000, 0, 2}, // two priorities, each with its own thresholds
		{3, 40, 30000, 65535, 0, 3},
	} {
		s := roceIncast(c.senders, c.gbps, c.xoff, c.quanta, c.refreshNs, c.prios)
		t.Run(s.Name, func(t *testing.T) {
			dir := t.TempDir()
			tr, err := sim.Run(s, dir)
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
				for _, c := range p.PFC {
					overflows += c.HeadroomOverflows
				}
			}
			if (overflows > 0) != (c.refreshNs > 0) {
				t.Errorf("%d headroom overflows, refresh_ns %d", overflows, c.refreshNs)
			}
			ends := map[string]int{}
			for _, p := range tr.Pauses {
				ends[p.End]++
			}
			if c.refreshNs > 0 && ends[sim.PauseEndExpiry] == 0 {
				t.Errorf("refresh slower than the pause, yet no pause expired: %v", ends)
			}
			for i := 1; i <= c.senders; i++ {
				for n := range c.prios {
					port := fmt.Sprintf("s%d/1", i)
					want := tr.Port(port).PausedNs[n]
					got := pausedFromFrames(t, filepath.Join(dir, fmt.Sprintf("s%d.pcapng", i)), int64(c.gbps)*1e9, n)
					if want == 0 || !within5(float64(got), float64(want)) {
						t.Errorf("%s priority %d paused %d ns by its PFC frames, truth %d ns (%v)", port, n, got, want, ends)
					}
				}
			}
			checkProbes(t, filepath.Join(dir, "r.pcapng"), tr)
			checkPFCAnalysis(t, dir, c.senders, c.gbps, c.prios, tr)
			checkHopsAnalysis(t, dir, tr)
		})
	}
}

// pausedFromFrames sums the time priority prio of a sender was paused,
// from the PFC frames its tap saw arrive.
func pausedFromFrames(t *testing.T, path string, bitsPerSec int64, prio int) int64 {
	var total, startNs, untilNs int64 = 0, -1, -1
	readTap(t, path, func(f *decode.Frame) {
		if f.Has&decode.HasPFC == 0 || f.Iface != sim.IfaceRx || !f.PFC.Enabled(prio) {
			return
		}
		now := f.TsNs
		if startNs >= 0 && untilNs <= now { // expired before this frame
			total += untilNs - startNs
			startNs = -1
		}
		q := f.PFC.Quanta[prio]
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
func checkProbes(t *testing.T, path string, tr *sim.Truth) {
	t.Helper()
	n := 0
	readTap(t, path, func(f *decode.Frame) {
		if f.Has&decode.HasIFAMetadata == 0 || f.Iface != sim.IfaceRx {
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

// within5 reports whether got is within 5 % of want.
func within5(got, want float64) bool { return math.Abs(got-want) <= 0.05*math.Abs(want) }

// checkPFCAnalysis: the pfc analysis of all the taps gives each sender's
// pause time on each priority, keyed by the pausing switch port's MAC,
// within 5 % of truth, in as many pauses as truth lists.
func checkPFCAnalysis(t *testing.T, dir string, senders, gbps, prios int, tr *sim.Truth) {
	t.Helper()
	var paths []string
	for i := 1; i <= senders; i++ {
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("s%d.pcapng", i)))
	}
	st, err := analyze.OpenStream(append(paths, filepath.Join(dir, "r.pcapng")), analyze.StreamOptions{MACControl: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := analyze.NewPFCAnalysis(analyze.PFCOptions{LinkBitsPerSec: int64(gbps) * 1e9})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analyze.Run(st, a, analyze.RunOptions[*analyze.PFCReport]{})
	if err != nil {
		t.Fatal(err)
	}
	lid := tr.Port("sw/1").LID
	for i := 1; i <= senders; i++ {
		for n := range prios {
			port := tr.Port(fmt.Sprintf("s%d/1", i))
			mac := fmt.Sprintf("02:00:01:%02x:%02x:%02x", lid>>8, lid&0xFF, i) // sw/i, the switch port that paused it
			var got *analyze.PausePriority
			for _, l := range rep.Links {
				for j := range l.Priorities {
					if l.Link == mac && l.Priorities[j].Priority == n {
						got = &l.Priorities[j]
					}
				}
			}
			pauses := 0
			for _, p := range tr.Pauses {
				if p.Port == port.Port && p.Priority == n {
					pauses++
				}
			}
			if got == nil || !within5(float64(got.PausedNs), float64(port.PausedNs[n])) || got.Pauses != pauses {
				t.Errorf("pfc analysis of %s priority %d (paused by %s): %+v; truth %d ns in %d pauses", port.Port, n, mac, got, port.PausedNs[n], pauses)
			}
		}
	}
	// A frame on the wire when a pause begins goes on to its end; counted as
	// paused, it made a sender that kept its link busy faster than the link
	// while not paused (41.8 Gb/s on 40, incast-small-roce).
	for _, pr := range rep.Priorities {
		for _, f := range pr.Flows {
			if g := f.UnpausedGbps; g != nil && *g > float64(gbps)*(1+1e-9) {
				t.Errorf("pfc: %s to %s priority %d sent %.3f Gb/s while not paused on a %d Gb/s link", f.Key, f.Link, pr.Priority, *g, gbps)
			}
		}
	}
}

// checkHopsAnalysis: the hops analysis of the receiver's tap gives the
// switch's output to it the probes' mean residence time and queue depth
// truth lists, and a mean residence within 5 % of every data packet's.
func checkHopsAnalysis(t *testing.T, dir string, tr *sim.Truth) {
	t.Helper()
	st, err := analyze.OpenStream([]string{filepath.Join(dir, "r.pcapng")}, analyze.StreamOptions{Ethernet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := analyze.NewHopsAnalysis(analyze.HopsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analyze.Run(st, a, analyze.RunOptions[*analyze.HopsReport]{})
	if err != nil {
		t.Fatal(err)
	}
	var probeRes, probeQueue, n float64
	for _, p := range tr.Probes {
		for _, h := range p.Hops {
			probeRes += float64(h.ResidenceNs)
			probeQueue += float64(h.QueueBytes)
			n++
		}
	}
	var allRes, packets float64
	for _, h := range tr.Hops {
		allRes += float64(h.MeanResidenceNs * h.Packets)
		packets += float64(h.Packets)
	}
	if len(rep.Ports) != 1 || n == 0 {
		t.Fatalf("hops analysis: %d ports, want the switch's one output to r; truth has %.0f probe hops", len(rep.Ports), n)
	}
	p := rep.Ports[0]
	if p.DeviceID != uint32(tr.Port("sw/1").LID) || int(p.Records) != int(n) || math.Abs(p.ResidenceNs.Mean-probeRes/n) > 1 ||
		math.Abs(p.Occupancy.Mean-probeQueue/n) > 1 || !within5(p.ResidenceNs.Mean, allRes/packets) {
		t.Errorf("hops analysis: %s: %d records, residence %+v, occupancy %+v; truth %.0f probe hops, residence %.1f ns, queue %.1f bytes; every packet's residence %.1f ns",
			p.HopID, p.Records, p.ResidenceNs, p.Occupancy, n, probeRes/n, probeQueue/n, allRes/packets)
	}
}

// TestIncast2015RoCE: the 2015 incast on RoCE tells the InfiniBand story
// in pauses: sender 1 runs alone unpaused until sender 2 starts, then each
// is paused about half the time (the receiver's link is shared); the pfc
// and hops analyses of the taps agree with truth.json within 5 %.
func TestIncast2015RoCE(t *testing.T) {
	s, err := sim.Preset("incast2015-roce")
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Taps {
		s.Taps[i].SnapBytes = 256 // the headers and the probes' metadata
	}
	dir := t.TempDir()
	tr, err := sim.Run(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	s2Start := tr.Flows[1].FirstNs
	overlapNs := tr.Flows[0].LastNs - s2Start
	for _, port := range []string{"s1/1", "s2/1"} {
		var paused int64
		for _, p := range tr.Pauses {
			if p.Port != port {
				continue
			}
			if p.StartNs < s2Start {
				t.Errorf("%s paused at %d, before sender 2 started at %d", port, p.StartNs, s2Start)
			}
			paused += max(0, min(p.EndNs, tr.Flows[0].LastNs)-max(p.StartNs, s2Start))
		}
		if share := float64(paused) / float64(overlapNs); share < 0.4 || share > 0.6 {
			t.Errorf("%s paused %.1f %% of the %d ns both senders ran, want about half", port, 100*share, overlapNs)
		}
	}
	checkPFCAnalysis(t, dir, 2, 10, 1, tr)
	checkHopsAnalysis(t, dir, tr)
}

// TestRoCETwoSwitches: through two PFC switches in a line, congestion
// spreads (the second switch pauses the first's output), and the analyses
// of the taps find each hop's residence time and the inter-switch link's
// pause time within 5 % of truth.
func TestRoCETwoSwitches(t *testing.T) {
	pfc := func() *sim.PFC { return &sim.PFC{XOFFBytes: 30000, PauseQuanta: 2000} }
	s := &sim.Scenario{Name: "two-switches", Seed: 1, LinkLayer: sim.LinkEthernet, Gbps: 100,
		Hosts:    []sim.Host{{Name: "s1"}, {Name: "s2"}, {Name: "s3"}, {Name: "r"}},
		Switches: []sim.Switch{{Name: "a", PFC: pfc()}, {Name: "b", PFC: pfc()}},
		Links:    []sim.Link{{A: "s1", B: "a"}, {A: "s2", B: "a"}, {A: "a", B: "b"}, {A: "s3", B: "b"}, {A: "b", B: "r"}},
		Taps:     []sim.Tap{{Port: "r/1", File: "r.pcapng"}, {Port: "a/3", File: "a3.pcapng"}}}
	for _, src := range []string{"s1", "s2", "s3"} {
		s.Flows = append(s.Flows, sim.Flow{Src: src, Dst: "r", Bytes: 4_000_000, IFAEvery: 7})
	}
	dir := t.TempDir()
	tr, err := sim.Run(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	a3 := tr.Port("a/3")
	if len(a3.PausedNs) == 0 || a3.PausedNs[0] == 0 {
		t.Fatal("the second switch never paused the first: no congestion spreading")
	}
	st, err := analyze.OpenStream([]string{filepath.Join(dir, "a3.pcapng")}, analyze.StreamOptions{MACControl: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pa, _ := analyze.NewPFCAnalysis(analyze.PFCOptions{LinkBitsPerSec: 100e9})
	pr, err := analyze.Run(st, pa, analyze.RunOptions[*analyze.PFCReport]{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Links) != 1 || !within5(float64(pr.Links[0].Priorities[0].PausedNs), float64(a3.PausedNs[0])) {
		t.Errorf("pfc analysis at a/3: %+v; truth paused %d ns", pr.Links, a3.PausedNs[0])
	}
	st2, err := analyze.OpenStream([]string{filepath.Join(dir, "r.pcapng")}, analyze.StreamOptions{Ethernet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	ha, _ := analyze.NewHopsAnalysis(analyze.HopsOptions{})
	hr, err := analyze.Run(st2, ha, analyze.RunOptions[*analyze.HopsReport]{})
	if err != nil {
		t.Fatal(err)
	}
	// Every packet's mean residence per switch, from truth.
	sum, n := map[string]float64{}, map[string]float64{}
	for _, h := range tr.Hops {
		sum[h.Switch] += float64(h.MeanResidenceNs * h.Packets)
		n[h.Switch] += float64(h.Packets)
	}
	if len(hr.Ports) != 2 {
		t.Fatalf("hops analysis: %d ports, want the two switches' outputs toward r", len(hr.Ports))
	}
	for _, p := range hr.Ports {
		sw := map[uint32]string{uint32(tr.Port("a/1").LID): "a", uint32(tr.Port("b/1").LID): "b"}[p.DeviceID]
		if sw == "" || !within5(p.ResidenceNs.Mean, sum[sw]/n[sw]) {
			t.Errorf("hops analysis: %s: mean residence %.1f ns; truth, every packet through switch %q: %.1f ns", p.HopID, p.ResidenceNs.Mean, sw, sum[sw]/n[sw])
		}
	}
}

// BenchmarkRunRoCEIncast: the RoCE twin of BenchmarkRunIncast (two senders
// of 1 MiB through a PFC switch, IFA probes, three taps).
func BenchmarkRunRoCEIncast(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if _, err := sim.Run(roceIncast(2, 100, 40000, 1000, 0, 1), dir); err != nil {
			b.Fatal(err)
		}
	}
}
