package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// -i any captures on every interface as tcpdump -i any does: each frame
// sent across the veth pair shows twice, leaving vsend and arriving on
// vcap, as a LINUX_SLL2 record naming the interface by index and the
// packet type (4, PACKET_OUTGOING, on vsend), with the source MAC and the
// frame after its Ethernet header (a VLAN tag the receiving kernel
// stripped put back), which ibscope decodes as RoCE. tshark's sll fields
// agree, and the pcapng interface is named any.
func TestIbcapAnyInterface(t *testing.T) {
	ns := newNetns(t)
	testenv.MustHaveTool(t, "tshark")
	want := bundledRoCE(t)
	out := filepath.Join(t.TempDir(), "any.pcapng")
	p := startIbcap(t, ns, nil, "-i", "any", "-w", out)
	ns.Replay(t, bundled, "--pps=50000")
	stopIbcap(t, p)
	send, recv := ifindex(t, ns, ns.Send), ifindex(t, ns, ns.Capture)
	recs, err := readRecords(t, out)
	if err != nil {
		t.Fatal(err)
	}
	byIf := map[uint32][][]byte{}
	for i, r := range recs {
		if len(r) < 20 || binary.BigEndian.Uint16(r[8:]) != 1 || r[11] != 6 {
			t.Fatalf("record %d is no SLL2 header of an Ethernet interface: %x", i+1, r[:min(len(r), 20)])
		}
		idx := binary.BigEndian.Uint32(r[4:])
		outgoing := r[10] == 4
		if (idx == send) != outgoing {
			t.Errorf("record %d: interface %d with packet type %d (vsend is %d, vcap %d)", i+1, idx, r[10], send, recv)
		}
		byIf[idx] = append(byIf[idx], r)
	}
	for _, idx := range []uint32{send, recv} {
		got := byIf[idx]
		if len(got) != len(want) {
			t.Fatalf("interface %d (vsend %d): %d records, %d RoCE frames sent (%d records in all)", idx, send, len(got), len(want), len(recs))
		}
		for i, w := range want {
			r := got[i]
			if !bytes.Equal(r[0:2], w[12:14]) || !bytes.Equal(r[12:18], w[6:12]) || !bytes.Equal(r[20:], w[14:]) {
				t.Fatalf("interface %d, frame %d: record\n %x\nfor frame\n %x", idx, i+1, r, w)
			}
		}
	}
	// ibscope decodes every record as RoCE, VLAN tags included.
	rd, err := capfile.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var frames []decode.Frame
	for {
		var f decode.Frame
		if err := rd.Next(&f); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	tagged := 0
	for _, w := range want {
		if binary.BigEndian.Uint16(w[12:]) == 0x8100 {
			tagged++
		}
	}
	gotTagged := 0
	for i, f := range frames {
		if f.Transport == decode.TransportNone {
			t.Fatalf("record %d does not decode as RoCE", i+1)
		}
		if f.VLANTagged {
			gotTagged++
		}
	}
	if gotTagged != 2*tagged {
		t.Errorf("%d records decode with a VLAN tag, want %d (%d tagged frames sent, each seen twice)", gotTagged, 2*tagged, tagged)
	}
	fields, err := exec.Command("tshark", "-r", out, "-T", "fields", "-e", "frame.interface_name", "-e", "sll.ifindex", "-e", "sll.pkttype").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", out, err)
	}
	count := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(fields)), "\n") {
		count[line]++
	}
	wantCount := map[string]int{fmt.Sprintf("any\t%d\t4", send): len(want)}
	for k, n := range count {
		if !strings.HasPrefix(k, fmt.Sprintf("any\t%d\t", recv)) || strings.HasSuffix(k, "\t4") {
			continue
		}
		wantCount[k] = n // the receiving side's packet type: to this host or another
	}
	if len(count) != len(wantCount) || count[fmt.Sprintf("any\t%d\t4", send)] != len(want) {
		t.Errorf("tshark's interface name, SLL2 interface index and packet type, with counts: %v; want %d outgoing on %d and the same received on %d",
			count, len(want), send, recv)
	}
	received := 0
	for k, n := range count {
		if strings.HasPrefix(k, fmt.Sprintf("any\t%d\t", recv)) {
			received += n
		}
	}
	if received != len(want) {
		t.Errorf("tshark sees %d frames received on %d, want %d", received, recv, len(want))
	}
}

// ifindex is the index of the namespace's interface dev.
func ifindex(t *testing.T, ns *testnetns.NS, dev string) uint32 {
	t.Helper()
	out, err := ns.Command("cat", "/sys/class/net/"+dev+"/ifindex").Output()
	if err != nil {
		t.Fatalf("ifindex of %s: %v", dev, err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 32)
	if err != nil {
		t.Fatalf("ifindex of %s: %q", dev, out)
	}
	return uint32(n)
}
