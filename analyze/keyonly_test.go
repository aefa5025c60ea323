package analyze

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/filter"
)

// TestKeyOnlySameKeyFields: a stream with KeyOnly, whose common RoCEv2
// frames are decoded only as far as their heads, hands out the same
// packets as one without, with the same fields KeyOnly names and every
// other field zero, on every bundled capture (IB, RoCEv1, RoCEv2 over
// IPv4 and IPv6, Linux cooked, ERF, pcapng, cut frames), without a
// filter, with one the head answers and with one that reads whole frames.
func TestKeyOnlySameKeyFields(t *testing.T) {
	paths, err := filepath.Glob("../testdata/pcaps/*.pcap*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no captures in testdata/pcaps: %v", err)
	}
	for _, expr := range []string{"", "psn >= 0 && src != 10.9.9.9", "reth_va >= 0 || len > 0"} {
		for _, path := range paths {
			name := filepath.Base(path) + " " + expr
			full := keyOnlyPackets(t, path, expr, false, 1)
			for _, workers := range []int{1, 2} {
				key := keyOnlyPackets(t, path, expr, true, workers)
				if len(full) != len(key) {
					t.Fatalf("%s, %d workers: %d packets with KeyOnly, %d without", name, workers, len(key), len(full))
				}
				for i := range full {
					want, got := full[i], key[i]
					want.VL, want.AckReq, want.FECN, want.BECN, want.ECN = 0, false, false, false, 0
					want.HasAETH, want.Syndrome, want.ICRCBad, want.VCRCBad = false, 0, false, false
					want.FCTBS, want.FCCL, want.MSN, want.DMALenB, want.IBBytes = 0, 0, 0, 0, 0
					want.EthernetFields, got.EthernetFields, want.CM, got.CM = nil, nil, nil, nil
					if got != want {
						t.Fatalf("%s, %d workers: packet %d with KeyOnly\n%+v\nwant\n%+v", name, workers, i, got, want)
					}
				}
			}
		}
	}
}

// keyOnlyPackets reads every packet of path, selected by expr, on the
// caller's goroutine or read ahead on workers.
func keyOnlyPackets(t *testing.T, path, expr string, keyOnly bool, workers int) []Packet {
	t.Helper()
	opts := StreamOptions{KeyOnly: keyOnly, Workers: workers}
	if expr != "" {
		f, err := filter.Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		opts.Select = &filter.Selection{Filter: f}
	}
	s, err := OpenStream([]string{path}, opts)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer s.Close()
	var out []Packet
	for {
		var p Packet
		if err := s.Next(&p); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, p)
	}
}
