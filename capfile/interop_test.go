package capfile

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"math/bits"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// The Wireshark 4.0 fields compared with our decoding, frame by frame.
// XRCETH has no field in 4.0 (XRC opcodes show as Unknown), and neither have
// FECN/BECN (they sit in the BTH's reserved byte) nor the ECN-bearing IP
// fields of interest here.
var interopFields = []string{
	"infiniband.lrh.vl", "infiniband.lrh.lver", "infiniband.lrh.sl", "infiniband.lrh.lnh",
	"infiniband.lrh.dlid", "infiniband.lrh.pktlen", "infiniband.lrh.slid",
	"infiniband.grh.tclass", "infiniband.grh.flowlabel", "infiniband.grh.paylen", "infiniband.grh.nxthdr",
	"infiniband.grh.hoplmt", "infiniband.grh.sgid", "infiniband.grh.dgid",
	"infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m", "infiniband.bth.padcnt",
	"infiniband.bth.tver", "infiniband.bth.p_key", "infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.psn",
	"infiniband.bth", // the raw BTH: 4.0 has no FECN/BECN fields, so they are read from its byte 4
	"infiniband.rdeth.eecnxt",
	"infiniband.deth.q_key", "infiniband.deth.srcqp",
	"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
	"infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
	"infiniband.aeth.syndrome", "infiniband.aeth.msn",
	"infiniband.atomicacketh.origremdt",
	"infiniband.immdt", "infiniband.ieth",
	"infiniband.invariant.crc", "infiniband.variant.crc",
	"infiniband_link.op", "infiniband_link.fctbs", "infiniband_link.vl", "infiniband_link.fccl", "infiniband_link.lpcrc",
	// What surrounds the IB packet; compared where we report it (RoCEv2
	// frames, ERF and Linux cooked records), as tshark reports it for
	// frames we pass over too.
	"frame.time_epoch", "ip.src", "ip.dst", "ip.dsfield.ecn", "ipv6.src", "ipv6.dst", "ipv6.tclass.ecn",
	"udp.srcport", "erf.flags.cap", "sll.pkttype",
	"eth.src", "eth.dst", "vlan.id", "vlan.priority", "vlan.dei", "ip.dsfield.dscp", "ip.ttl",
	"ipv6.tclass.dscp", "ipv6.hlim", "ipv6.flow",
}

// outerFields are compared only on frames where we report them.
var outerFields = map[string]bool{"frame.time_epoch": true, "ip.src": true, "ip.dst": true, "ip.dsfield.ecn": true,
	"ipv6.src": true, "ipv6.dst": true, "ipv6.tclass.ecn": true, "udp.srcport": true, "erf.flags.cap": true, "sll.pkttype": true,
	"eth.src": true, "eth.dst": true, "vlan.id": true, "vlan.priority": true, "vlan.dei": true, "ip.dsfield.dscp": true, "ip.ttl": true,
	"ipv6.tclass.dscp": true, "ipv6.hlim": true, "ipv6.flow": true}

// Wireshark's payload heuristics (RPC-over-RDMA, SMB Direct, ...) claim our
// synthetic payloads and then throw "Malformed", which hides the CRC fields.
var interopDisabled = []string{"rpcordma", "smb_direct", "smc", "nvme-rdma", "lnet", "iser", "infiniband_sdp", "fcoib"}

func TestInteropTshark(t *testing.T) {
	tshark := testenv.MustHaveTool(t, "tshark")
	files := []string{}
	for _, name := range generatedFiles(t) {
		files = append(files, filepath.Join(pcapsDir, name))
	}
	if m, _ := filepath.Glob(filepath.Join(sharedDir, "*.pcap")); len(m) > 0 {
		sort.Strings(m)
		files = append(files, m...)
	} else {
		t.Logf("real captures absent (%s): comparing the generated captures only", sharedDir)
	}
	perField := map[string]int{}
	frames := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			frames += interopFile(t, tshark, path, perField)
		})
	}
	total := 0
	for _, name := range interopFields {
		t.Logf("%-36s equal on %5d frames", name, perField[name])
		total += perField[name]
		if perField[name] == 0 {
			t.Errorf("%s: compared on no frame: tshark and we never both report it", name)
		}
	}
	t.Logf("%d field values equal across %d frames in %d files", total, frames, len(files))
}

// interopFile compares one capture, counts the equal values per field in
// perField, and returns the number of frames.
func interopFile(t *testing.T, tshark, path string, perField map[string]int) int {
	frames := readAll(t, path)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	lt := r.LinkType()
	r.Close()
	opened := path
	if needsERFCopy(t, path) {
		opened = erfCopy(t, path)
	}
	args := []string{"-r", opened, "-n", "-T", "fields", "-E", "header=n", "-E", "separator=/t", "-E", "occurrence=f", "-e", "frame.number"}
	for _, p := range interopDisabled {
		args = append(args, "--disable-protocol", p)
	}
	// RoCEv2 from a UDP source port below 4791 goes to that port's dissector unless told.
	ports := map[uint16]bool{}
	for _, f := range frames {
		if f.Transport == decode.TransportRoCEv2 && f.UDPSrc < decode.UDPPortRoCEv2 && !ports[f.UDPSrc] {
			ports[f.UDPSrc] = true
			args = append(args, "-d", fmt.Sprintf("udp.port==%d,infiniband", f.UDPSrc))
		}
	}
	for _, fl := range interopFields {
		args = append(args, "-e", fl)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tshark, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(frames) {
		t.Fatalf("%s: tshark shows %d frames, we read %d", path, len(lines), len(frames))
	}
	equal := 0
	for i, line := range lines {
		cols := strings.Split(line, "\t")
		if len(cols) != len(interopFields)+1 {
			t.Fatalf("%s: frame %d: tshark gave %d columns, want %d", path, i+1, len(cols), len(interopFields)+1)
		}
		f := &frames[i]
		ours := ourFields(f, lt)
		for j, name := range interopFields {
			theirs, err := canonical(name, cols[j+1])
			if err != nil {
				t.Errorf("%s: frame %d: field %s: tshark value %q: %v", path, f.Number, name, cols[j+1], err)
				continue
			}
			mine, have := ours[name]
			if outerFields[name] && !have {
				continue
			}
			switch {
			case theirs == "" && !have:
			case theirs != "" && have && theirs == mine:
				equal++
				perField[name]++
			case theirs != "" && have:
				t.Errorf("%s: frame %d: field %s: tshark %s, we %s", path, f.Number, name, theirs, mine)
			case theirs == "" && tsharkGap(f, name):
			case theirs == "":
				t.Errorf("%s: frame %d: field %s: we report %s, tshark nothing", path, f.Number, name, mine)
			default:
				t.Errorf("%s: frame %d: field %s: tshark reports %s, we nothing (err %v)", path, f.Number, name, theirs, f.Err)
			}
		}
	}
	t.Logf("%s: %d frames, %d field values equal", filepath.Base(path), len(frames), equal)
	return len(frames)
}

// tsharkGap reports the fields Wireshark 4.0 leaves out where we report them.
func tsharkGap(f *decoded, name string) bool {
	op := f.BTH.OpCode
	switch {
	case strings.HasSuffix(name, ".crc") && f.Truncated():
		return true
	case strings.HasSuffix(name, ".crc") && f.Has&decode.HasMAD != 0:
		return true // 4.0 shows a MAD's CRCs only when its attribute's parser ends at the ICRC (SA and PerfMgt records do not)
	case isExtField(name) && (op.Family() == decode.FamilyXRC || op.Family() >= decode.FamilyCNP):
		return true // XRC, CNP (0x80, 0x81) and vendor opcodes are "Unknown" to 4.0: no headers after the BTH, no CRC
	}
	return false
}

// isExtField reports the fields of what follows the BTH: extended headers and CRCs.
func isExtField(name string) bool {
	if !strings.HasPrefix(name, "infiniband.") || name == "infiniband.bth" {
		return false
	}
	for _, p := range []string{"infiniband.lrh.", "infiniband.grh.", "infiniband.bth.", "infiniband_link."} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}

// canonical turns a tshark field value into the form ourFields produces.
func canonical(name, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	switch {
	case name == "frame.time_epoch":
		return v, nil
	case name == "eth.src" || name == "eth.dst":
		return strings.ToLower(v), nil
	case strings.HasSuffix(name, "gid") || strings.HasSuffix(name, ".src") && name != "udp.srcport" || strings.HasSuffix(name, ".dst"):
		a, err := netip.ParseAddr(v)
		if err != nil {
			return "", err
		}
		return a.String(), nil
	case name == "infiniband.bth":
		b, err := hex.DecodeString(strings.ReplaceAll(v, ":", ""))
		if err != nil || len(b) < 5 {
			return "", fmt.Errorf("raw BTH %q: %v", v, err)
		}
		return fmt.Sprintf("fecn=%d becn=%d", b[4]>>7, b[4]>>6&1), nil
	case name == "infiniband.immdt" || name == "infiniband.ieth":
		return strings.ToLower(strings.ReplaceAll(v, ":", "")), nil
	case v == "True":
		return "1", nil
	case v == "False":
		return "0", nil
	}
	n, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		return "", err
	}
	return strconv.FormatUint(n, 10), nil
}

// ourFields renders a decoded frame of a capture of linkType as tshark field values.
func ourFields(f *decoded, linkType int) map[string]string {
	m := map[string]string{"frame.time_epoch": fmt.Sprintf("%d.%09d", f.TsNs/1e9, f.TsNs%1e9)}
	u := func(name string, v uint64) { m[name] = strconv.FormatUint(v, 10) }
	b := func(name string, v bool) {
		if v {
			m[name] = "1"
		} else {
			m[name] = "0"
		}
	}
	switch {
	case f.Iface < 0:
	case linkType == decode.LinkTypeLinuxSLL || linkType == decode.LinkTypeLinuxSLL2:
		u("sll.pkttype", uint64(f.Iface))
	default:
		u("erf.flags.cap", uint64(f.Iface))
	}
	if f.Has&decode.HasEthernet != 0 {
		m["eth.src"] = string(decode.AppendMAC(nil, macBits(f.SrcMAC)))
		m["eth.dst"] = string(decode.AppendMAC(nil, macBits(f.DstMAC)))
	}
	if f.NumVLANs > 0 { // tshark's first occurrence: the outer tag
		u("vlan.id", uint64(f.VLANs[0].ID))
		u("vlan.priority", uint64(f.VLANs[0].PCP))
		b("vlan.dei", f.VLANs[0].DEI)
	}
	if f.Transport == decode.TransportRoCEv2 {
		if f.Has&decode.HasIPv4 != 0 {
			m["ip.src"], m["ip.dst"] = f.Src.String(), f.Dst.String()
			u("ip.dsfield.ecn", uint64(f.ECN))
			u("ip.dsfield.dscp", uint64(f.DSCP))
			u("ip.ttl", uint64(f.TTL))
		} else {
			m["ipv6.src"], m["ipv6.dst"] = f.Src.String(), f.Dst.String()
			u("ipv6.tclass.ecn", uint64(f.ECN))
			u("ipv6.tclass.dscp", uint64(f.DSCP))
			u("ipv6.hlim", uint64(f.TTL))
			u("ipv6.flow", uint64(f.FlowLabel))
		}
		u("udp.srcport", uint64(f.UDPSrc))
	}
	if f.Has&decode.HasLRH != 0 {
		l := &f.LRH
		u("infiniband.lrh.vl", uint64(l.VL))
		u("infiniband.lrh.lver", uint64(l.LVer))
		u("infiniband.lrh.sl", uint64(l.SL))
		u("infiniband.lrh.lnh", uint64(l.LNH))
		u("infiniband.lrh.dlid", uint64(l.DLID))
		u("infiniband.lrh.pktlen", uint64(l.PktLen))
		u("infiniband.lrh.slid", uint64(l.SLID))
	}
	if f.Has&decode.HasGRH != 0 {
		g := &f.GRH
		u("infiniband.grh.tclass", uint64(g.TClass))
		u("infiniband.grh.flowlabel", uint64(g.FlowLabel))
		u("infiniband.grh.paylen", uint64(g.PayLen))
		u("infiniband.grh.nxthdr", uint64(g.NxtHdr))
		u("infiniband.grh.hoplmt", uint64(g.HopLmt))
		m["infiniband.grh.sgid"] = g.SrcGID().String()
		m["infiniband.grh.dgid"] = g.DstGID().String()
	}
	if f.Has&decode.HasBTH != 0 {
		t := &f.BTH
		u("infiniband.bth.opcode", uint64(t.OpCode))
		b("infiniband.bth.se", t.SE)
		b("infiniband.bth.m", t.M)
		u("infiniband.bth.padcnt", uint64(t.PadCnt))
		u("infiniband.bth.tver", uint64(t.TVer))
		u("infiniband.bth.p_key", uint64(t.PKey))
		u("infiniband.bth.destqp", uint64(t.DestQP))
		b("infiniband.bth.a", t.AckReq)
		u("infiniband.bth.psn", uint64(t.PSN))
		m["infiniband.bth"] = fmt.Sprintf("fecn=%d becn=%d", b2i(t.FECN), b2i(t.BECN))
	}
	if f.Has&decode.HasRDETH != 0 {
		u("infiniband.rdeth.eecnxt", uint64(f.RDETH.EECnxt))
	}
	if f.Has&decode.HasDETH != 0 {
		u("infiniband.deth.q_key", uint64(f.DETH.QKey))
		u("infiniband.deth.srcqp", uint64(f.DETH.SrcQP))
	}
	if f.Has&decode.HasRETH != 0 {
		u("infiniband.reth.va", f.RETH.VA)
		u("infiniband.reth.r_key", uint64(f.RETH.RKey))
		u("infiniband.reth.dmalen", uint64(f.RETH.DMALen))
	}
	if f.Has&decode.HasAtomicETH != 0 {
		u("infiniband.atomiceth.swapdt", f.AtomicETH.SwapAdd)
		u("infiniband.atomiceth.cmpdt", f.AtomicETH.Compare)
		// 4.0 shows the AtomicETH's VA and R_Key under the RETH's field names.
		u("infiniband.reth.va", f.AtomicETH.VA)
		u("infiniband.reth.r_key", uint64(f.AtomicETH.RKey))
	}
	if f.Has&decode.HasAETH != 0 {
		u("infiniband.aeth.syndrome", uint64(f.AETH.Syndrome))
		u("infiniband.aeth.msn", uint64(f.AETH.MSN))
	}
	if f.Has&decode.HasAtomicAckETH != 0 {
		u("infiniband.atomicacketh.origremdt", f.AtomicAckETH.OrigRemData)
	}
	if f.Has&decode.HasImmDt != 0 {
		m["infiniband.immdt"] = fmt.Sprintf("%08x", f.ImmDt.Imm)
	}
	if f.Has&decode.HasIETH != 0 {
		m["infiniband.ieth"] = fmt.Sprintf("%08x", f.IETH.RKey)
	}
	// Wireshark shows the CRCs read big-endian; we keep them as the
	// little-endian values the CRC functions compute.
	if f.Has&decode.HasICRC != 0 && !f.Truncated() {
		u("infiniband.invariant.crc", uint64(bits.ReverseBytes32(f.BTH.ICRC)))
	}
	if f.Has&decode.HasLRH != 0 && f.LRH.HasVCRC && !f.Truncated() {
		u("infiniband.variant.crc", uint64(bits.ReverseBytes16(f.LRH.VCRC)))
	}
	if f.Has&decode.HasLink != 0 {
		l := &f.Link
		u("infiniband_link.op", uint64(l.Op))
		u("infiniband_link.fctbs", uint64(l.FCTBS))
		u("infiniband_link.vl", uint64(l.VL))
		u("infiniband_link.fccl", uint64(l.FCCL))
		u("infiniband_link.lpcrc", uint64(bits.ReverseBytes16(l.LPCRC)))
	}
	return m
}

// needsERFCopy reports the captures Wireshark 4.0 cannot show as they are:
// LINKTYPE_INFINIBAND (it does not open 247), and link packets in ERF type 25
// records: after the link fields, its link dissector parses the same bytes as
// an LRH (and a GRH or BTH when the LNH bits say so) for the Info column,
// runs past the 6-byte packet and throws, dropping the fields.
func needsERFCopy(t *testing.T, path string) bool {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.LinkType() == decode.LinkTypeInfiniBand {
		return true
	}
	if r.LinkType() != decode.LinkTypeERF {
		return false
	}
	var f decode.Frame
	for r.Next(&f) != io.EOF {
		if f.Transport == decode.TransportLink {
			return true
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// erfCopy rewrites a native IB capture (247 or ERF) as ERF records that
// Wireshark 4.0 shows: each link packet is padded with zeros to linkPadBytes,
// so that its dissector finds the bytes it reads (see needsERFCopy).
const linkPadBytes = 64 // LRH + GRH + BTH would need 60

func erfCopy(t *testing.T, path string) string {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".pcap")+".erf.pcap")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := NewPcapWriter(f, decode.LinkTypeERF)
	if err != nil {
		t.Fatal(err)
	}
	var fr decode.Frame
	for {
		data, err := r.NextRecord(&fr)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		typ, iface := uint8(decode.ERFTypeInfiniBand), uint8(0)
		if r.LinkType() == decode.LinkTypeERF {
			var e decode.ERF
			if err := e.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("%s: frame %d: %v", path, fr.Number, err)
			}
			typ, iface, data, fr.WireLen = e.Type, e.Interface(), e.Payload, int(e.WLen)
		} else if len(data) == decode.LinkFCPLen {
			typ = decode.ERFTypeIBLink
		}
		if typ == decode.ERFTypeIBLink {
			data = append(data[:decode.LinkFCPLen:decode.LinkFCPLen], make([]byte, linkPadBytes-decode.LinkFCPLen)...)
			fr.WireLen = linkPadBytes
		}
		if err := w.WritePacket(&Packet{TsNs: fr.TsNs, ERFType: typ, Data: data, WireLenBytes: fr.WireLen, Iface: iface}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out
}

// macControlInteropFields are Wireshark 4.0's MAC control fields (its
// packet-macctrl dissector); the PFC ones say "cbfc" (class-based flow control).
var macControlInteropFields = []string{"macc.opcode", "macc.pause_time", "macc.cbfc.enbv",
	"macc.cbfc.pause_time.c0", "macc.cbfc.pause_time.c1", "macc.cbfc.pause_time.c2", "macc.cbfc.pause_time.c3",
	"macc.cbfc.pause_time.c4", "macc.cbfc.pause_time.c5", "macc.cbfc.pause_time.c6", "macc.cbfc.pause_time.c7"}

// TestInteropTsharkMACControl writes PFC and PAUSE frames (odd ones too: a
// vector naming no priority, times on disabled priorities) and compares
// every field with tshark's, frame by frame.
func TestInteropTsharkMACControl(t *testing.T) {
	tshark := testenv.MustHaveTool(t, "tshark")
	var pkts [][]byte
	for _, l := range []gopacket.SerializableLayer{
		&decode.PFC{ClassEnable: 0x08, Quanta: [8]uint16{3: 0xFFFF}},
		&decode.PFC{ClassEnable: 0x08},
		&decode.PFC{ClassEnable: 0xFF, Quanta: [8]uint16{1, 2, 3, 4, 5, 6, 7, 65535}},
		&decode.PFC{ClassEnable: 0x81, Quanta: [8]uint16{0: 0x1234, 7: 0x8000}},
		&decode.PFC{},
		&decode.PFC{ClassEnable: 0x01, Quanta: [8]uint16{0: 10, 5: 7}},
		&decode.Pause{Quanta: 0xFFFF},
		&decode.Pause{},
		&decode.Pause{Quanta: 0x0102},
	} {
		pkts = append(pkts, macControlFrame(t, l))
	}
	path := writeCapture(t, decode.LinkTypeEthernet, pkts...)
	args := []string{"-r", path, "-n", "-T", "fields", "-E", "header=n", "-E", "separator=/t", "-E", "occurrence=f", "-e", "frame.number"}
	for _, fl := range macControlInteropFields {
		args = append(args, "-e", fl)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", strings.Join(args, " "), err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(pkts) {
		t.Fatalf("tshark shows %d frames, we wrote %d", len(lines), len(pkts))
	}
	d := decode.Decoder{LinkType: decode.LinkTypeEthernet}
	equal := 0
	for i, line := range lines {
		var f decode.Frame
		f.CapLen, f.WireLen = len(pkts[i]), len(pkts[i])
		_ = d.Decode(pkts[i], &f) // the odd frames are errors with every field decoded
		ours := map[string]string{}
		switch {
		case f.Has&decode.HasPFC != 0:
			ours["macc.opcode"] = strconv.Itoa(int(f.PFC.Opcode))
			ours["macc.cbfc.enbv"] = strconv.Itoa(int(f.PFC.ClassEnable))
			for n, q := range f.PFC.Quanta {
				ours["macc.cbfc.pause_time.c"+strconv.Itoa(n)] = strconv.Itoa(int(q))
			}
		case f.Has&decode.HasPause != 0:
			ours["macc.opcode"] = strconv.Itoa(int(f.Pause.Opcode))
			ours["macc.pause_time"] = strconv.Itoa(int(f.Pause.Quanta))
		default:
			t.Fatalf("frame %d: not decoded as PFC or PAUSE", i+1)
		}
		cols := strings.Split(line, "\t")
		if len(cols) != len(macControlInteropFields)+1 {
			t.Fatalf("frame %d: tshark gave %d columns, want %d", i+1, len(cols), len(macControlInteropFields)+1)
		}
		for j, name := range macControlInteropFields {
			theirs := cols[j+1]
			if theirs != "" {
				v, err := strconv.ParseUint(theirs, 0, 16)
				if err != nil {
					t.Fatalf("frame %d: %s: tshark value %q: %v", i+1, name, theirs, err)
				}
				theirs = strconv.FormatUint(v, 10)
			}
			if mine := ours[name]; mine != theirs {
				t.Errorf("frame %d: %s: tshark %q, we %q", i+1, name, theirs, mine)
			} else if mine != "" {
				equal++
			}
		}
	}
	t.Logf("%d MAC control field values equal across %d frames", equal, len(pkts))
}

// macBits is a MAC address as decode.AppendMAC takes it.
func macBits(m [6]byte) uint64 {
	return uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
}
