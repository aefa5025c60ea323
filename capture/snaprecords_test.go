package capture_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/sim"
)

// TestSnapRecordsMatchSim: an ibsim tap with a snap length and ibcap's
// writer with the same snap length, given the same packets, write the same
// ERF records byte for byte: rlen, wlen, the truncated flag, the interface
// bits, the padding. The packets are those of an unsnapped tap on the same
// port, fed to capture.Writer cut as a capture source cuts them.
func TestSnapRecordsMatchSim(t *testing.T) {
	for _, snap := range []int{sim.MinSnapBytes, 61, 128} {
		t.Run(fmt.Sprint(snap), func(t *testing.T) {
			s := sim.Incast(sim.IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 1024, VLBufferBytes: 16 << 10, TickNs: 16,
				Senders: 2, BytesPerSender: 64 << 10, SamplePeriodNs: 20_000})
			whole := s.Taps[0]
			whole.File, whole.SnapBytes = "whole.pcap", 0
			cut := whole
			cut.File, cut.SnapBytes = "cut.pcap", snap
			s.Taps = append(s.Taps, whole, cut)
			dir := t.TempDir()
			if _, err := sim.Run(s, dir); err != nil {
				t.Fatal(err)
			}

			ours := filepath.Join(dir, "ibcap.pcap")
			w, err := capture.NewWriter(capture.WriterConfig{Path: ours, Format: capture.FormatERF, LinkType: decode.LinkTypeInfiniBand, SnapLenBytes: snap})
			if err != nil {
				t.Fatal(err)
			}
			r, err := capfile.Open(filepath.Join(dir, "whole.pcap"))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var f decode.Frame
			var e decode.ERF
			cutPackets := 0
			for {
				data, err := r.NextRecord(&f)
				if err != nil {
					break
				}
				if err := e.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
					t.Fatal(err)
				}
				pkt := e.Payload[:min(len(e.Payload), snap)]
				if len(pkt) < int(e.WLen) {
					cutPackets++
				}
				if err := w.Write(&capfile.Packet{TsNs: e.TimestampNs(), Data: pkt, WireLenBytes: int(e.WLen), Iface: e.Interface()}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, "cut.pcap"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(ours)
			if err != nil {
				t.Fatal(err)
			}
			// The file headers differ only in the snap length they declare
			// (ibsim's taps: 65535, the ERF record's limit).
			const pcapHeaderBytes = 24
			if cutPackets == 0 || len(got) < pcapHeaderBytes || !bytes.Equal(got[pcapHeaderBytes:], want[pcapHeaderBytes:]) {
				t.Fatalf("%d cut packets; ibcap's records (%d bytes) differ from ibsim's (%d bytes)", cutPackets, len(got), len(want))
			}
			truncated := 0
			r2, err := capfile.Open(ours)
			if err != nil {
				t.Fatal(err)
			}
			defer r2.Close()
			for {
				data, err := r2.NextRecord(&f)
				if err != nil {
					break
				}
				if data[9]&decode.ERFFlagTruncated != 0 {
					truncated++
				}
			}
			t.Logf("snap %d: %d bytes of records alike, %d records cut and flagged", snap, len(want)-pcapHeaderBytes, truncated)
			if truncated != cutPackets {
				t.Errorf("%d records flagged truncated, %d packets cut", truncated, cutPackets)
			}
		})
	}
}
