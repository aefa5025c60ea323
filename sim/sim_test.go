package sim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

func smallIncast() *Scenario {
	s := Incast(IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 1 << 20, StaggerNs: 100_000, SamplePeriodNs: 20_000, CreditJitterNs: 4})
	s.TruthPackets = true
	return s
}

// TestRunDeterministic: the same scenario and seed give the same bytes.
func TestRunDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if _, err := Run(smallIncast(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(smallIncast(), b); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"s1.pcap", "s2.pcap", "r.pcap", "perfquery.txt", "truth.json"} {
		x, err := os.ReadFile(filepath.Join(a, f))
		if err != nil {
			t.Fatal(err)
		}
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
	}
	s := smallIncast()
	s.Seed = 2
	c := t.TempDir()
	if _, err := Run(s, c); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(filepath.Join(a, "s1.pcap"))
	y, _ := os.ReadFile(filepath.Join(c, "s1.pcap"))
	if bytes.Equal(x, y) {
		t.Error("another seed gave the same capture: the credit jitter ignores the seed")
	}
}

// TestRunTruth checks the run's conservation laws: every packet sent is
// delivered, the switch input buffer never overflows (queueing delay is
// bounded by a full buffer's drain), and the truth file parses back.
func TestRunTruth(t *testing.T) {
	dir := t.TempDir()
	tr, err := Run(smallIncast(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if tr.DataPackets != 1024 {
		t.Errorf("%d data packets, want 2 x 512", tr.DataPackets)
	}
	if sw := tr.Port("sw/3"); sw.XmitPkts < 1024 || sw.XmitWaitTicks != 0 {
		t.Errorf("switch output to the receiver: %d packets, %d wait ticks; want all packets and no waiting", sw.XmitPkts, sw.XmitWaitTicks)
	}
	for _, p := range []string{"s1/1", "s2/1"} {
		pt := tr.Port(p)
		if pt.XmitWaitTicks == 0 || len(pt.Congestion) == 0 {
			t.Errorf("%s never waited for credits in an incast", p)
		}
	}
	if len(tr.Packets) != 1024 {
		t.Fatalf("%d packet truths, want 1024", len(tr.Packets))
	}
	// A packet waits at most for a full input buffer (15 packets of 2074
	// bytes) drained at half the QDR rate, plus one packet of the other input.
	maxQueueNs := int64(16 * 2 * 2074 / 4)
	for _, p := range tr.Packets {
		if p.QueueNs < 0 || p.QueueNs > maxQueueNs || p.DeliverNs <= p.InjectNs {
			t.Fatalf("packet %+v: queueing delay outside [0, %d] ns", p, maxQueueNs)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Truth
	if err := json.Unmarshal(b, &back); err != nil || back.Port("sw/1").VLBufferBytes[0] != 32768 {
		t.Errorf("truth.json: %v, sw/1 %+v", err, back.Port("sw/1"))
	}
}

// TestRunDataOnlyTap: an ibdump-like tap holds no flow-control packets.
func TestRunDataOnlyTap(t *testing.T) {
	s := smallIncast()
	s.Taps[0].DataOnly = true
	tr, err := Run(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if tr.Taps[0].Frames != 513 || tr.Taps[1].Frames <= 513 {
		t.Errorf("frames: data-only tap %d (want 512 data packets and the ACK), full tap %d (want more)", tr.Taps[0].Frames, tr.Taps[1].Frames)
	}
}

func BenchmarkRunIncast(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		s := smallIncast()
		s.TruthPackets = false
		if _, err := Run(s, dir); err != nil {
			b.Fatal(err)
		}
	}
}

// TestVLArbitration: the switch output serves VLs in turn, so a flow alone
// on VL 1 gets half the receiver's link while two flows share VL 0's half.
// With equal sizes X link-times each, the VL 1 flow ends at 2X and the
// other two at 3X.
func TestVLArbitration(t *testing.T) {
	yaml := `name: vls
rate: QDR
vls: 2
hosts: [{name: s1}, {name: s2}, {name: r}]
switches: [{name: sw}]
links: [{a: s1, b: sw}, {a: s2, b: sw}, {a: sw, b: r}]
flows:
  - {src: s1, dst: r, bytes: 1048576, sl: 0}
  - {src: s1, dst: r, bytes: 1048576, sl: 1}
  - {src: s2, dst: r, bytes: 1048576, sl: 0}
`
	s, err := LoadScenario(writeFile(t, "vls.yaml", yaml))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	x := float64(512*2074) / 4 // ns: 512 packets of 2074 bytes at QDR 4x (4 bytes/ns)
	end := func(i int) float64 { return float64(tr.Flows[i].LastNs - tr.StartNs) }
	for i, want := range []float64{3 * x, 2 * x, 3 * x} {
		if got := end(i); got < 0.97*want || got > 1.03*want {
			t.Errorf("flow %d (SL %d) ended at %.0f ns, want about %.0f", i, tr.Flows[i].SL, got, want)
		}
	}
	if b := tr.Port("sw/1").VLBufferBytes; len(b) != 2 || b[0] != 32768 || b[1] != 32768 {
		t.Errorf("sw/1 buffers %v, want 2 VLs of 32 KiB", b)
	}
}

// TestTwoSwitches: routes span switches, every link runs its own credits,
// and a one-direction tap on a switch-to-switch port sees only its side.
func TestTwoSwitches(t *testing.T) {
	yaml := `rate: EDR
hosts: [{name: s1}, {name: s2}, {name: r}]
switches: [{name: a}, {name: b, port_buffer_bytes: 65536}]
links: [{a: s1, b: a}, {a: s2, b: a}, {a: a, b: b}, {a: b, b: r}]
flows:
  - {src: s1, dst: r, bytes: 1048576}
  - {src: s2, dst: r, bytes: 1048576}
  - {src: r, dst: s1, bytes: 65536, op: send}
taps: [{port: a/3, file: ab.pcap, direction: tx}]
`
	s, err := LoadScenario(writeFile(t, "two.yaml", yaml))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tr, err := Run(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Port("b/2").XmitPkts; got < 1024 {
		t.Errorf("b/2 sent %d packets to r, want the 1024 data packets of both senders", got)
	}
	if got := tr.Port("b/1").VLBufferBytes[0]; got != 16384 {
		t.Errorf("b/1 buffer %d, want 64 KiB over 4 VLs", got)
	}
	// The tap sees a's side only: the data toward b (1024 packets and s1's
	// ACK of r's message) and a's FCPs, all on interface 0.
	rd, err := capfile.Open(filepath.Join(dir, "ab.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var f decode.Frame
	data, fcps := 0, 0
	for rd.Next(&f) == nil {
		if f.Iface != IfaceTx {
			t.Fatalf("frame %d on interface %d in a tx-only tap", f.Number, f.Iface)
		}
		if f.Transport == decode.TransportLink {
			fcps++
		} else {
			data++
		}
	}
	if data != 1025 || fcps == 0 {
		t.Errorf("tx-only tap: %d data packets, %d FCPs; want 1025 and some", data, fcps)
	}
	if tr.Flows[2].Packets != 32 || tr.Port("s1/1").RcvPkts < 32 {
		t.Errorf("reverse flow: %d packets sent, s1 received %d", tr.Flows[2].Packets, tr.Port("s1/1").RcvPkts)
	}
}
