package analyze

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/filter"
	"github.com/ibscope/ibscope/internal/testcap"
)

// TestWorkersSameReports: flows and ipd report the same, to the byte of
// their JSON, whether the stream decodes on one goroutine or read ahead on
// several (StreamOptions.Workers), on two files merged holding 8 QPs
// interleaved over many batches, with lost and resent PSNs, bad ICRCs,
// CE marks, packets stamped out of order within and beyond the reorder
// window, and a selection that stops part way.
func TestWorkersSameReports(t *testing.T) {
	dir := t.TempDir()
	var pkts [2][]testcap.Packet
	ts := testcap.BaseNs
	psn := map[uint32]uint32{}
	for i := range 30_000 {
		qp := uint32(i%8 + 1)
		ts += 100 + int64(i%13)*7
		p := testcap.Packet{TsNs: ts, Src: 1, Dst: 2, QP: qp, PSN: psn[qp], Op: 0x0A, Payload: 64 + i%5*32, DMALen: 256, AckReq: i%4 == 0}
		switch {
		case i%997 == 0:
			p.PSN++ // one lost
		case i%1009 == 0:
			p.PSN-- // one resent
		}
		psn[qp] = (p.PSN + 1) & decode.PSNMask
		p.BadICRC = i%1201 == 0
		if i%53 == 0 {
			p.ECN = 3
		}
		if i%211 == 0 {
			p.TsNs -= 3_000 // out of order, within the window
		}
		if i%5003 == 0 {
			p.TsNs -= 50_000_000 // beyond it: Late
		}
		pkts[i%2] = append(pkts[i%2], p)
		if p.AckReq {
			pkts[(i+1)%2] = append(pkts[(i+1)%2], testcap.Packet{TsNs: ts + 50, Src: 2, Dst: 1, QP: qp + 100, PSN: p.PSN, Op: 0x11})
		}
	}
	paths := []string{testcap.WriteIn(t, dir, "a.pcap", false, pkts[0]), testcap.WriteIn(t, dir, "b.pcap", false, pkts[1])}

	report := func(t *testing.T, opts StreamOptions, run func(s *Stream) (any, error)) string {
		j, _ := streamReport(t, paths, opts, run)
		return j
	}
	flows := func(s *Stream) (any, error) { return runFlows(s, nil) }
	ipd := func(s *Stream) (any, error) { return runIPD(s, IPDOptions{}, nil) }
	for name, c := range map[string]struct {
		opts StreamOptions
		run  func(s *Stream) (any, error)
	}{
		"flows":          {StreamOptions{CheckCRC: true}, flows},
		"flows window 8": {StreamOptions{CheckCRC: true, WindowPackets: 8}, flows},
		"flows -c 7000":  {StreamOptions{CheckCRC: true, Select: &filter.Selection{Count: 7000}}, flows},
		"ipd":            {StreamOptions{}, ipd},
	} {
		t.Run(name, func(t *testing.T) {
			want := report(t, c.opts, c.run)
			if name == "flows" {
				var w struct{ Stats StreamStats }
				json.Unmarshal([]byte(want), &w)
				if st := w.Stats; st.Packets < 30_000 || st.Late == 0 || st.OutOfOrder == 0 {
					t.Fatalf("the capture does not hold what the test needs: %+v", st)
				}
			}
			for _, workers := range []int{2, 4} {
				o := c.opts
				o.Workers = workers
				if got := report(t, o, c.run); got != want {
					t.Errorf("%d workers: the report differs from one goroutine's:\n%.600s\nwant:\n%.600s", workers, got, want)
				}
			}
		})
	}
}

// TestWorkersSeenTwice: in a Linux cooked capture holding most frames
// twice (leaving one interface, arriving at another), the second records
// are found and left out the same read ahead, where the workers print the
// packets (packetBatch), as on one goroutine: over many batches, with
// frames seen once and resent ones between them.
func TestWorkersSeenTwice(t *testing.T) {
	var buf bytes.Buffer
	w, err := capfile.NewPcapWriter(&buf, decode.LinkTypeLinuxSLL2)
	if err != nil {
		t.Fatal(err)
	}
	record := func(tsNs int64, outgoing bool, p testcap.Packet) {
		t.Helper()
		sll := make([]byte, 20, 20+300) // the SLL2 header
		binary.BigEndian.PutUint16(sll, 0x0800)
		binary.BigEndian.PutUint16(sll[8:], 1) // ARPHRD_ETHER
		if outgoing {
			sll[10] = linuxOutgoing
		}
		sll[11] = 6
		data := append(sll, testcap.RoCEFrame(t, p)[14:]...)
		if err := w.WritePacket(&capfile.Packet{TsNs: tsNs, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	ts := testcap.BaseNs
	for i := range 5000 {
		ts += 1000
		p := testcap.Packet{TsNs: ts, Src: 1, Dst: 2, QP: uint32(i%3 + 1), PSN: uint32(i / 3), Op: 0x0A, Payload: 64 + i%4*64, DMALen: 256}
		if i%101 == 7 {
			p.PSN-- // a resend: the same packet as one before, not its second record
		}
		record(ts, true, p)
		if i%7 != 0 { // else seen once only
			record(ts+200, false, p)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "any.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	report := func(workers int) (string, StreamStats) {
		return streamReport(t, []string{path}, StreamOptions{CheckCRC: true, Workers: workers},
			func(s *Stream) (any, error) { return runFlows(s, nil) })
	}
	want, st := report(1)
	if st.SeenTwice < 4000 || st.Packets < 5000 {
		t.Fatalf("one goroutine left out %d second records of %d packets: the capture does not test what it should", st.SeenTwice, st.Packets)
	}
	for _, workers := range []int{2, 4} {
		if got, _ := report(workers); got != want {
			t.Errorf("%d workers: the report differs from one goroutine's:\n%.600s\nwant:\n%.600s", workers, got, want)
		}
	}
}

// streamReport runs an analysis over paths and returns its report and the
// stream's counts as one JSON text, to compare byte for byte, and the counts.
func streamReport(t *testing.T, paths []string, opts StreamOptions, run func(s *Stream) (any, error)) (string, StreamStats) {
	t.Helper()
	s, err := OpenStream(paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := run(s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(struct {
		Report any
		Stats  StreamStats
	}{r, s.Stats()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b), s.Stats()
}
