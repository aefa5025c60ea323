package correlate

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// TestExportPFCPauseIFA exports a RoCE capture holding PFC and PAUSE frames
// and an IFA 2.0 probe to Parquet and Arrow: the MAC control frames are rows
// (transport null), and every row read back by the independent reader holds
// the decode JSON's values, pfc quanta as pfc_quanta_0 to _7 and the IFA
// headers as ifa_* columns. The probe's hops have no columns.
func TestExportPFCPauseIFA(t *testing.T) {
	t0 := testcap.BaseNs
	pkt := func(i int) testcap.Packet {
		return testcap.Packet{TsNs: t0 + int64(i)*1000, Src: 1, Dst: 2, QP: 0x11, PSN: uint32(i), Op: 0x04, Payload: 64} // RC SEND Only
	}
	hops := []decode.IFAHop{
		{LNS: 1, DeviceID: 0xABCDE, IPTTL: 63, EgressPortSpeed: 4, Congestion: 3, QueueID: 5, RxTimeSec: 12345, EgressPort: 7, IngressPort: 9, RxTimeNs: 999_999_999, ResidenceNs: 1500},
		{LNS: 1, DeviceID: 42, IPTTL: 64, EgressPortSpeed: 6, QueueID: 1, RxTimeSec: 12345, EgressPort: 1, IngressPort: 2, RxTimeNs: 1000, ResidenceNs: 800},
	}
	capture := testcap.WriteFrames(t, "pfc-pause-ifa.pcap", []testcap.Frame{
		{TsNs: t0, B: testcap.RoCEFrame(t, pkt(0))},
		{TsNs: t0 + 1000, B: testcap.PFCFrame(t, 10, map[int]uint16{0: 0xFFFF, 3: 1234, 7: 0})},
		{TsNs: t0 + 2000, B: testcap.MACControlFrame(t, 10, &decode.Pause{Opcode: decode.MACControlOpPause, Quanta: 1000})},
		{TsNs: t0 + 3000, B: testcap.IFAProbe(t, pkt(3), hops)},
		{TsNs: t0 + 4000, B: testcap.RoCEFrame(t, pkt(4))},
	})
	want := contractRows(t, capture)
	var pfc, pause, ifa int
	for _, r := range want {
		if r["pfc_quanta_3"] == "1234" && r["transport"] == "" {
			pfc++
		}
		if r["pause_quanta"] == "1000" && r["transport"] == "" {
			pause++
		}
		if r["ifa_version"] == "2" && r["ifa_hops_1_device_id"] == "42" {
			ifa++
		}
		for k := range r {
			if strings.HasPrefix(k, "ifa_hops_") {
				delete(r, k)
			}
		}
	}
	if len(want) != 5 || pfc != 1 || pause != 1 || ifa != 1 {
		t.Fatalf("the decode JSON of the capture is not what the test built (%d frames, %d PFC, %d PAUSE, %d IFA): %v", len(want), pfc, pause, ifa, want)
	}

	dir := t.TempDir()
	var jobs []readJob
	for _, format := range []Format{FormatParquet, FormatArrow} {
		out := filepath.Join(dir, "packets"+format.Ext())
		if st := exportTo(t, capture, out, ExportOptions{Format: format}); st.Frames != 5 {
			t.Fatalf("%s: %d rows exported, want 5", out, st.Frames)
		}
		jobs = append(jobs, readJob{Kind: format.String(), Path: out})
	}
	for i, got := range readBack(t, jobs...) {
		t.Run(jobs[i].Kind, func(t *testing.T) {
			compareRows(t, got.Rows, want)
			got.checkDescribed(t, []Format{FormatParquet, FormatArrow}[i], filepath.Base(capture))
		})
	}
}

// TestPacketBatchRareReset fills a batch's PFC, PAUSE and IFA columns,
// resets it and adds a frame without those headers: the columns are null in
// the record and the values under the nulls are zero again.
func TestPacketBatchRareReset(t *testing.T) {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.Append("x.pcap")
	files := sb.NewArray()
	defer files.Release()
	b := newPacketBatch(batchSchema(PacketSchema(nil)), files)
	rare := decode.Frame{Iface: -1, Has: decode.HasPFC | decode.HasPause | decode.HasIFA | decode.HasIFAMetadata | decode.HasIFA1}
	rare.PFC = decode.PFC{Opcode: decode.MACControlOpPFC, ClassEnable: 0xFF, Quanta: [8]uint16{1, 2, 3, 4, 5, 6, 7, 8}}
	rare.Pause.Quanta = 9
	rare.IFA = decode.IFA{Version: 2, GNS: 15, NextHdr: 17, Flags: 1, MaxLength: 255}
	rare.IFAMetadata = decode.IFAMetadata{RequestVector: 1, ActionVector: 2, HopLimit: 3, CurrentLength: 4}
	rare.IFA1 = decode.IFA1{ProbeMarker: 10, Version: 1, MsgType: 2, Flags: 3, RequestVector: 4, ActionVector: 5, HopLimit: 6, HopCount: 7, MaxLength: 8, CurrentLength: 9, SenderHandle: 10, SeqNumber: 11}
	b.add(&rare, 0, dirUnknown, "")
	rec := b.record()
	for _, name := range []string{"pfc_quanta_7", "pause_quanta", "ifa_max_len", "ifa_cur_len", "ifa1_seq", "ifa1_probe_marker"} {
		if c := rec.Column(fieldIndex(packetFields(), name)); c.NullN() != 0 || c.ValueStr(0) == "0" {
			t.Errorf("%s = %s (nulls %d), want the frame's value", name, c.ValueStr(0), c.NullN())
		}
	}
	rec.Release()

	b.reset()
	plain := decode.Frame{Iface: -1}
	b.add(&plain, 0, dirUnknown, "")
	rec = b.record()
	defer rec.Release()
	for i, f := range packetFields() {
		if !strings.HasPrefix(f.Name, "pfc_") && !strings.HasPrefix(f.Name, "pause_") && !strings.HasPrefix(f.Name, "ifa") {
			continue
		}
		c := rec.Column(i)
		if c.NullN() != 1 {
			t.Errorf("%s: %d nulls, want 1", f.Name, c.NullN())
		}
		if raw := c.Data().Buffers()[1].Bytes(); !bytes.Equal(raw, make([]byte, len(raw))) {
			t.Errorf("%s: values under the null are %v, want zeros", f.Name, raw)
		}
	}
}
