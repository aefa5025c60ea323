package decode

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/ibscope/ibscope/internal/testenv"
)

// qinqFrame is a RoCEv2 packet behind an S-tag (802.1ad, PCP 5, DEI, VLAN
// 200) and a C-tag (PCP 3, VLAN 100).
func qinqFrame(t *testing.T) []byte {
	roce := rocePacket(t, 0x04, 16)
	tags := []byte{0x88, 0xA8, 5<<5 | 1<<4, 200, 0x81, 0x00, 3 << 5, 100}
	return append(append(append([]byte(nil), roce[:12]...), tags...), roce[12:]...)
}

// TestQinQ: each tag of a QinQ stack is kept, outermost first, and shown in
// the JSON and the table's columns; tshark reads the same tags.
func TestQinQ(t *testing.T) {
	data := qinqFrame(t)
	var f Frame
	d := Decoder{LinkType: LinkTypeEthernet, CheckCRC: true}
	if err := d.Decode(data, &f); err != nil || f.Transport != TransportRoCEv2 || !f.ICRCOK {
		t.Fatalf("%v, ICRC ok %v (%v)", f.Transport, f.ICRCOK, err)
	}
	want := []VLANTag{{0x88A8, 5, true, 200}, {0x8100, 3, false, 100}}
	if f.NumVLANs != 2 || f.VLANs[0] != want[0] || f.VLANs[1] != want[1] || f.VLANPCP != 5 {
		t.Errorf("tags %+v (%d), PCP %d", f.VLANs[:f.NumVLANs], f.NumVLANs, f.VLANPCP)
	}
	js := string(f.AppendJSON(nil, ""))
	if !strings.Contains(js, `"vlans":[{"tpid":34984,"pcp":5,"dei":true,"id":200},{"tpid":33024,"pcp":3,"dei":false,"id":100}]`) ||
		!strings.Contains(js, `"dscp":`) || !strings.Contains(js, `"ttl":64`) || !strings.Contains(js, `"udp_src_port":`) {
		t.Errorf("JSON %s", js)
	}
	cols := map[string]uint64{}
	for _, g := range ColumnGroups() {
		if !g.Present(&f) {
			continue
		}
		var v ColumnValues
		g.Values(&f, &v)
		for i, c := range g.Columns {
			cols[c.Name] = v.Num[i]
		}
	}
	if cols["vlan_id"] != 200 || cols["vlan_pcp"] != 5 || cols["vlan_dei"] != 1 || cols["vlan2_id"] != 100 || cols["vlan2_pcp"] != 3 || cols["ttl"] != 64 {
		t.Errorf("columns %v", cols)
	}
	tshark := testenv.MustHaveTool(t, "tshark")
	path := filepath.Join(t.TempDir(), "qinq.pcap")
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	w.WriteFileHeader(65535, layers.LinkTypeEthernet)
	w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(data), Length: len(data)}, data)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
		"-e", "ieee8021ad.id", "-e", "ieee8021ad.priority", "-e", "ieee8021ad.dei", // the S-tag
		"-e", "vlan.id", "-e", "vlan.priority", "-e", "vlan.dei", "-e", "eth.src", "-e", "ip.ttl").Output()
	wantOut := "200\t5\t1\t100\t3\t0\t" + string(AppendMAC(nil, cols["eth_src"])) + "\t64\n"
	if err != nil || !strings.EqualFold(string(out), wantOut) {
		t.Errorf("tshark: %q (%v), want %q", out, err, wantOut)
	}
}
