package metrics

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// congestedPackets is a few RC flows with every event the flow series
// count: requests lost (PSN gaps), resent (retransmissions) and
// reordered, NAKs and RNR NAKs, RDMA READs and their responses, CNPs and
// ECN-CE marks, and a QP number reused after an idle second.
func congestedPackets() []testcap.Packet {
	rnd := rand.New(rand.NewPCG(1, 2))
	var pkts []testcap.Packet
	ts := testcap.BaseNs
	psn := map[uint32]uint32{}
	for i := range 4000 {
		ts += 1000 + rnd.Int64N(3000)
		if i == 2000 {
			ts += 2_000_000_000 // idle: QP 0x13's next PSN far away starts a new sequence
			psn[0x13] = 5_000_000
		}
		qp := uint32(0x10 + rnd.IntN(6))
		src, dst := byte(1+qp%3), byte(7)
		p := testcap.Packet{TsNs: ts, Src: src, Dst: dst, QP: qp, Op: 0x0a, Payload: 256 + int(qp)*16, DMALen: 256}
		switch r := rnd.IntN(100); {
		case r < 4: // lost: the PSN is skipped
			psn[qp]++
			p.PSN = psn[qp]
		case r < 8: // resent
			p.PSN = psn[qp] - uint32(rnd.IntN(3))
		case r < 10: // reordered: the next one first
			p.PSN = psn[qp] + 1
		case r < 14:
			p = testcap.Packet{TsNs: ts, Src: dst, Dst: src, QP: qp + 0x100, Op: 0x11, PSN: psn[qp], Syndrome: 0x60 + byte(rnd.IntN(4))} // NAK
		case r < 16:
			p = testcap.Packet{TsNs: ts, Src: dst, Dst: src, QP: qp + 0x100, Op: 0x11, PSN: psn[qp], Syndrome: 0x20 + byte(rnd.IntN(31))} // RNR NAK
		case r < 24:
			p = testcap.Packet{TsNs: ts, Src: dst, Dst: src, QP: qp + 0x100, Op: 0x11, PSN: psn[qp], Syndrome: 0x1f} // ACK
		case r < 28:
			p = testcap.Packet{TsNs: ts, Src: dst, Dst: src, QP: qp, Op: 0x81} // CNP
		case r < 31: // RDMA READ request of 4 KB, then its responses
			p.Op, p.Payload, p.DMALen, p.PSN = 0x0c, 0, 4096, psn[qp]
			psn[qp] += 15
		case r < 34:
			p = testcap.Packet{TsNs: ts, Src: dst, Dst: src, QP: qp + 0x100, Op: 0x10, PSN: psn[qp], Syndrome: 0x1f, Payload: 256} // READ response only
		default:
			p.PSN = psn[qp]
		}
		psn[qp]++
		if rnd.IntN(10) == 0 {
			p.ECN = 3
		}
		pkts = append(pkts, p)
	}
	return pkts
}

// TestLiveCountsAgreeWithFlows: the live table counts every flow as
// ibanalyze flows does (analyze's FlowsAnalysis, fed the same decoded
// headers): packets, wire bytes, CNPs, ECN-CE, NAKs, retransmissions and
// PSN gaps per flow, the flows past the bound as one, and the same
// inter-packet gaps; on generated congested RoCEv2 and native IB traffic
// and on every bundled capture.
func TestLiveCountsAgreeWithFlows(t *testing.T) {
	type captured struct {
		name     string
		linkType int
		recs     [][]byte
		frames   []decode.Frame
	}
	var caps []captured
	pkts := congestedPackets()
	for _, native := range []bool{false, true} {
		c := captured{name: "generated RoCEv2", linkType: decode.LinkTypeEthernet}
		if native {
			c.name, c.linkType = "generated native IB", decode.LinkTypeInfiniBand
		}
		for _, p := range pkts {
			b := testcap.RoCEFrame(t, p)
			if native {
				b = testcap.NativeFrame(t, p)
			}
			c.recs = append(c.recs, b)
			c.frames = append(c.frames, decode.Frame{TsNs: p.TsNs, WireLen: len(b)})
		}
		caps = append(caps, c)
	}
	paths, err := filepath.Glob("../testdata/pcaps/*.pcap*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bundled captures: %v", err)
	}
	for _, path := range paths {
		r, err := capfile.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, frames, err := testcap.Records(r)
		lt := r.LinkType()
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		caps = append(caps, captured{filepath.Base(path), lt, recs, frames})
	}
	for _, c := range caps {
		for _, maxFlows := range []int{maxAnalyzedFlows, 3} {
			compareWithFlows(t, c.name, c.linkType, c.recs, c.frames, maxFlows)
		}
	}
}

func compareWithFlows(t *testing.T, name string, linkType int, recs [][]byte, frames []decode.Frame, maxFlows int) {
	t.Helper()
	l, err := New(Config{Device: "mem", LinkType: linkType})
	if err != nil {
		t.Fatal(err)
	}
	l.flows.maxFlows = maxFlows
	want := analyze.NewFlowsAnalysis(analyze.FlowsOptions{MaxFlows: maxFlows, NoThroughput: true})
	dec := decode.Decoder{LinkType: linkType}
	var f decode.Frame
	var p analyze.Packet
	var gaps, wantGaps, wantGapSum int64
	latestNs := map[decode.FlowKey]int64{}
	for i, rec := range recs {
		pkt := capfile.Packet{Data: rec, TsNs: frames[i].TsNs, WireLenBytes: frames[i].WireLen}
		l.flowMu.Lock()
		before := l.ipd.count
		l.count(&pkt, 1)
		gaps += int64(l.ipd.count - before)
		l.flowMu.Unlock()
		data := rec[:min(len(rec), headerBytes)]
		f.CapLen, f.WireLen = len(data), pkt.WireLenBytes
		if dec.Decode(data, &f) != nil {
			continue
		}
		f.TsNs = pkt.TsNs
		p.Fill(&f)
		want.Add(&p)
		// The gap since the flow's latest packet, for the first maxFlows
		// flows (those past it are counted together and have none).
		if prev, seen := latestNs[p.Key]; seen {
			if p.TsNs >= prev {
				wantGaps++
				wantGapSum += p.TsNs - prev
			}
			latestNs[p.Key] = max(prev, p.TsNs)
		} else if len(latestNs) < maxFlows {
			latestNs[p.Key] = p.TsNs
		}
	}
	if gaps != wantGaps || int64(l.ipd.sumNs) != wantGapSum { // the sum is exact below 2^53 ns
		t.Errorf("%s, %d flows at most: %d gaps adding up to %.0f ns, flows has %d adding up to %d", name, maxFlows, gaps, l.ipd.sumNs, wantGaps, wantGapSum)
	}
	res, err := want.Result()
	if err != nil {
		t.Fatal(err)
	}
	wantByKey := map[string]analyze.FlowCounts{}
	for i := range res.NumFlows() {
		wantByKey[res.Key(i).String()] = res.Counts(i)
	}
	got := map[string]flowCounts{}
	for i := range l.flows.flows {
		got[analyze.FlowGroupKey(l.flows.names[i]).String()] = l.flows.flows[i].counts
	}
	if l.flows.other.counts.Packets > 0 {
		got["other"] = l.flows.other.counts
	}
	if len(got) != len(wantByKey) {
		t.Errorf("%s, %d flows at most: %d flows, flows has %d", name, maxFlows, len(got), len(wantByKey))
	}
	var sum flowCounts
	for k, w := range wantByKey {
		g := got[k]
		sum.add(&g)
		if g != (flowCounts{w.Packets, w.WireBytes, w.CNPs, w.ECNCE, w.NAKs, w.Retrans, w.PSNGaps}) {
			t.Errorf("%s, %d flows at most, flow %s: %+v, flows has %+v", name, maxFlows, k, g, w)
		}
	}
	if name == "generated RoCEv2" && maxFlows > 3 && (sum.CNPs == 0 || sum.ECNCE == 0 || sum.NAKs == 0 || sum.Retrans == 0 || sum.PSNGaps == 0) {
		t.Errorf("the generated traffic should exercise every count: %+v", sum)
	}
}
