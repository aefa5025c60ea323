package analyze_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/sim"
)

// dropFrames copies a capture leaving out the frames drop says to.
func dropFrames(t *testing.T, src, dst string, drop func(f *decode.Frame) bool) {
	t.Helper()
	r, err := capfile.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := pcapgo.NewWriterNanos(out)
	if err := w.WriteFileHeader(65535, layers.LinkType(decode.LinkTypeERF)); err != nil {
		t.Fatal(err)
	}
	var f decode.Frame
	dec := decode.Decoder{LinkType: decode.LinkTypeERF}
	for {
		data, err := r.NextRecord(&f)
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		ts := f.TsNs
		if err := dec.Decode(data, &f); err != nil {
			t.Fatal(err)
		}
		if drop(&f) {
			continue
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, ts), CaptureLength: len(data), Length: len(data)}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCreditsFCTBSCheck: frames missing from a capture show up as FCTBS
// advancing by more than the blocks of the data packets seen.
func TestCreditsFCTBSCheck(t *testing.T) {
	dir := t.TempDir()
	s := sim.Incast(sim.IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 2 << 20, StaggerNs: 200_000, SamplePeriodNs: 50_000})
	if _, err := sim.Run(s, dir); err != nil {
		t.Fatal(err)
	}
	lossy := filepath.Join(dir, "lossy.pcap")
	n := 0
	dropFrames(t, filepath.Join(dir, "s1.pcap"), lossy, func(f *decode.Frame) bool {
		if f.Transport != decode.TransportIB || f.Iface != sim.IfaceTx {
			return false
		}
		n++
		return n >= 500 && n < 505 // five 2074-byte packets: 5 x 33 blocks
	})
	rep, err := analyze.Credits(files(lossy), analyze.CreditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Links[0]
	if l.FCTBSMismatches != 1 || l.MissingBlocks != 165 || len(l.Mismatches) != 1 || l.Mismatches[0].Blocks != 165 {
		t.Errorf("after dropping 5 packets: %d mismatches, %d missing blocks (%+v); want 1 and 165", l.FCTBSMismatches, l.MissingBlocks, l.Mismatches)
	}
	if l.BufferBytes != 32<<10 {
		t.Errorf("buffer %d bytes, want 32 KiB despite the loss", l.BufferBytes)
	}

	// Without any FCPs, credits refuses and says why.
	bare := filepath.Join(dir, "bare.pcap")
	dropFrames(t, filepath.Join(dir, "s1.pcap"), bare, func(f *decode.Frame) bool { return f.Transport == decode.TransportLink })
	if _, err := analyze.Credits(files(bare), analyze.CreditOptions{}); !errors.Is(err, analyze.ErrNoFCP) {
		t.Errorf("capture without FCPs: error %v, want ErrNoFCP", err)
	}
}
