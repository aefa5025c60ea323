package analyze

import (
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/protostate"
)

// runCM runs the cm analysis over captures.
func runCM(t *testing.T, paths ...string) *CMReport {
	t.Helper()
	s, err := OpenStream(paths, StreamOptions{CM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := NewCMAnalysis(0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, a, RunOptions[*CMReport]{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCMConnections reads testdata/gen's rdma_cm session (rocev2_cm.pcap)
// and checks each connection against what the generator wrote: ends,
// QPs, starting PSNs, times from the frames' own timestamps, states.
func TestCMConnections(t *testing.T) {
	path := filepath.Join("..", "testdata", "pcaps", "rocev2_cm.pcap")
	_, frames, err := testcap.FileRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := func(frame int) int64 { return frames[frame-1].TsNs }
	r := runCM(t, path)
	if len(r.Connections) != 4 || r.Established != 1 || r.Rejected != 2 || r.Incomplete != 1 {
		t.Fatalf("%d connections, %d established, %d rejected, %d incomplete: want 4, 1, 2, 1: %+v", len(r.Connections), r.Established, r.Rejected, r.Incomplete, r.Connections)
	}
	if r.Messages["REQ"] != 4 || r.Messages["SIDR_REQ"] != 1 || r.Messages["LAP"] != 1 {
		t.Errorf("messages %v", r.Messages)
	}
	c := r.Connections[0]
	want := CMConnection{Transport: "rocev2", Active: "192.168.7.1", Passive: "192.168.7.2", ActiveCommID: 0x1001, PassiveCommID: 0x2001,
		ServiceID: 0x0000000001061C06, ActiveIP: "192.168.7.1", ActivePort: 50000, PassiveIP: "192.168.7.2", PassivePort: 7174,
		ActiveQPN: 0x11, ActivePSN: 0xFFFFF8, PassiveQPN: 0x22, PassivePSN: 1000,
		REQNs: ts(1), REPNs: ts(3), RTUNs: ts(4), REQToREPNs: ts(3) - ts(1), REPToRTUNs: ts(4) - ts(3),
		REQs: 1, MRAs: 1, PathChanges: 1, DREQNs: ts(13), DREPNs: ts(14), State: "disconnected", FirstNs: ts(1), LastNs: ts(14)}
	if c != want {
		t.Errorf("connection 1:\n got %+v\nwant %+v", c, want)
	}
	if c := r.Connections[1]; c.State != "rejected" || c.RejectReason != 28 || c.RejectReasonName != "CONSUMER_DEFINED" || c.ActiveQPN != 0x12 || *c.RejectedMessage != 0 {
		t.Errorf("connection 2: %+v", c)
	}
	if c := r.Connections[2]; c.State != "incomplete" || c.ActiveQPN != 0x13 || c.PassivePSN != 7000 || c.REPNs != 0 {
		t.Errorf("connection 3: %+v", c)
	}
	if c := r.Connections[3]; c.State != "rejected" || c.RejectReason != 1 || c.ActiveIP != "fd00:1b00:0:7::1" || c.Transport != "rocev2" {
		t.Errorf("connection 4 (IPv6): %+v", c)
	}
}

// TestCMBound: past --max-connections the messages of new connections are
// counted, not kept.
func TestCMBound(t *testing.T) {
	a, err := NewCMAnalysis(1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		p := Packet{TsNs: int64(i), Key: decode.FlowKey{Transport: decode.TransportIB, SLID: 1, DLID: 2, DestQP: 1},
			CM: &decode.CMMessage{Message: decode.CMRequest, LocalCommID: uint32(i + 1)}}
		a.Add(&p)
	}
	r, _ := a.Report(nil)
	if len(r.Connections) != 1 || r.MaxConnections != 1 || r.OtherMessages != 2 {
		t.Errorf("%d connections, bound %d, %d other messages: want 1, 1, 2", len(r.Connections), r.MaxConnections, r.OtherMessages)
	}
	if _, err := NewCMAnalysis(-1); err == nil {
		t.Error("a bound of -1 connections accepted")
	}
}

// TestFlowsRestartOnCM: a QP number used again by a new connection 10 ms
// after its last packet (too soon for the idle rule) starts new
// sequences when a REQ and REP set the connection up: no gap, no
// duplicate, one new sequence each way. Without the CM it would be a jump.
func TestFlowsRestartOnCM(t *testing.T) {
	const ms = int64(1_000_000)
	send := func(ts int64, src, dst byte, qp, psn uint32) testcap.Packet {
		return testcap.Packet{TsNs: testcap.BaseNs + ts, Src: src, Dst: dst, QP: qp, PSN: psn, Op: 0x04, Payload: 64}
	}
	mad := func(ts int64, src, dst byte, b []byte) testcap.Packet {
		return testcap.Packet{TsNs: testcap.BaseNs + ts, Src: src, Dst: dst, QP: 1, PSN: 1, Op: 0x64, MAD: b}
	}
	pkts := []testcap.Packet{
		send(0, 1, 2, 0x22, 100), send(1, 2, 1, 0x11, 500),
		send(2, 1, 2, 0x22, 101), send(3, 2, 1, 0x11, 501),
	}
	second := []testcap.Packet{
		send(11*ms, 1, 2, 0x22, 9_000_000), send(11*ms+1, 2, 1, 0x11, 3_000_000),
		send(11*ms+2, 1, 2, 0x22, 9_000_001), send(11*ms+3, 2, 1, 0x11, 3_000_001),
	}
	cm := []testcap.Packet{
		mad(10*ms, 1, 2, testcap.CMMAD(decode.CMRequest, 7, 0, 0x11, 3_000_000)),
		mad(10*ms+1, 2, 1, testcap.CMMAD(decode.CMReply, 8, 7, 0x22, 9_000_000)),
		mad(10*ms+2, 1, 2, testcap.CMMAD(decode.CMReadyToUse, 7, 8, 0, 0)),
	}
	for _, withCM := range []bool{true, false} {
		all := append(append([]testcap.Packet{}, pkts...), second...)
		if withCM {
			all = append(append(append([]testcap.Packet{}, pkts...), cm...), second...)
		}
		path := testcap.Write(t, "restart.pcap", false, all)
		r := runFlowsWith(t, StreamOptions{CheckCRC: true, CM: true}, path) // as ibanalyze flows reads
		for _, f := range r.Flows {
			if f.Key.DestQP == nil || *f.Key.DestQP == 1 {
				continue
			}
			clean := protostate.PSNStats{NewSequences: 1}
			switch {
			case withCM && f.PSN != clean:
				t.Errorf("with the CM, %s: %+v, want one new sequence and nothing else", f.Key, f.PSN)
			case !withCM && f.PSN == clean:
				t.Errorf("without the CM, %s: %+v: the jump 10 ms later should not start a new sequence", f.Key, f.PSN)
			}
			fromActive := *f.Key.DestQP == 0x22 // host 1 sent the REQ: its packets go to the REP's QP
			want := &FlowConnection{ServiceID: 0x0000000001061C06, ActiveCommID: 7, FromActive: fromActive, PassivePort: 7174}
			switch {
			case withCM && (f.Connection == nil || *f.Connection != *want):
				t.Errorf("with the CM, %s: connection %+v, want %+v", f.Key, f.Connection, want)
			case !withCM && f.Connection != nil:
				t.Errorf("without the CM, %s: connection %+v", f.Key, f.Connection)
			}
		}
	}
}

// TestDCFlowsMeet: DC requests (to the DCT's number) and the responses
// (to the DCI's QP) are two flows that find each other as RC's do: the
// request flow of rocev2_cm.pcap's DC traffic has its response flow as
// ack peer and an ACK latency, and neither has a PSN anomaly.
func TestDCFlowsMeet(t *testing.T) {
	r := runFlowsFiles(t, filepath.Join("..", "testdata", "pcaps", "rocev2_cm.pcap"))
	found := false
	for _, f := range r.Flows {
		if f.Key.DestQP == nil || *f.Key.DestQP != 0x5A {
			continue
		}
		found = true
		if f.AckPeer == nil || f.AckPeer.DestQP == nil || *f.AckPeer.DestQP != 0x6B || f.AckLatencyNs == nil || f.AckLatencyNs.Count == 0 {
			t.Errorf("DC request flow %s: ack peer %v, latency %v: want the responses to QP 0x6b and a latency", f.Key, f.AckPeer, f.AckLatencyNs)
		}
		if f.PSN != (protostate.PSNStats{}) || f.ResponsePSN != (protostate.PSNStats{}) {
			t.Errorf("DC request flow %s: %+v %+v", f.Key, f.PSN, f.ResponsePSN)
		}
	}
	if !found {
		t.Fatal("no DC request flow to QP 0x5a")
	}
}
