package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// nativeIBPacket is a native IB packet (LRH, BTH, payload, ICRC, VCRC)
// with correct CRCs.
func nativeIBPacket(psn uint32) []byte {
	ib := bthBytes(opSendOnly, 0x21, psn, 32)
	pkt := make([]byte, 8, 8+len(ib)+2)
	words := (8 + len(ib) + 2) / 4
	pkt[0] = 0x00               // VL 0, LVer 0
	pkt[1] = 0x02               // SL 0, LNH = IBA local
	pkt[2], pkt[3] = 0x00, 0x05 // DLID 5
	pkt[4], pkt[5] = byte(words>>8), byte(words)
	pkt[6], pkt[7] = 0x00, 0x07 // SLID 7
	pkt = append(pkt, ib...)
	pkt = append(pkt, 0, 0)
	decode.SealNative(pkt)
	return pkt
}

func writePackets(t *testing.T, cfg WriterConfig, pkts []capfile.Packet) *Writer {
	t.Helper()
	w, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		if err := w.Write(&pkts[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w
}

// Every format round-trips through capfile's reader with ns timestamps and
// the wire length of cut packets.
func TestWriterFormatsRoundTrip(t *testing.T) {
	roce, _ := mixedTraffic(20, false)
	var ib [][]byte
	for i := range 20 {
		ib = append(ib, nativeIBPacket(uint32(i/5))) // PSNs as mixedTraffic numbers them
	}
	cases := []struct {
		format   Format
		src      int
		frames   [][]byte
		wantLink int
	}{
		{FormatAuto, decode.LinkTypeEthernet, roce, decode.LinkTypeEthernet},
		{FormatPcapNG, decode.LinkTypeEthernet, roce, decode.LinkTypeEthernet},
		{FormatERF, decode.LinkTypeEthernet, roce, decode.LinkTypeERF},
		{FormatAuto, decode.LinkTypeInfiniBand, ib, decode.LinkTypeERF},
		{FormatPcapNG, decode.LinkTypeInfiniBand, ib, decode.LinkTypeERF},
		{FormatIB247, decode.LinkTypeInfiniBand, ib, decode.LinkTypeInfiniBand},
	}
	for _, c := range cases {
		t.Run(c.format.String()+"-"+strconv.Itoa(c.src), func(t *testing.T) {
			const snap = 90 // past every header of the test frames: a cut payload still decodes
			var pkts []capfile.Packet
			for i, f := range c.frames {
				data := f
				if i%2 == 1 {
					data = f[:min(snap, len(f))]
				}
				pkts = append(pkts, capfile.Packet{Data: data, TsNs: 1_700_000_000_123_456_789 + int64(i)*7, WireLenBytes: len(f)})
			}
			path := filepath.Join(t.TempDir(), "out")
			w := writePackets(t, WriterConfig{Path: path, Format: c.format, LinkType: c.src}, pkts)
			if w.LinkType() != c.wantLink {
				t.Errorf("link type %d, want %d", w.LinkType(), c.wantLink)
			}
			r, err := capfile.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i := range pkts {
				var f decode.Frame
				if err := r.Next(&f); err != nil {
					t.Fatalf("frame %d: %v", i+1, err)
				}
				if f.TsNs != pkts[i].TsNs {
					t.Errorf("frame %d: ts %d, want %d", i+1, f.TsNs, pkts[i].TsNs)
				}
				if f.Transport == decode.TransportNone || f.BTH.PSN != uint32(i/5) {
					t.Errorf("frame %d: transport %v PSN %d", i+1, f.Transport, f.BTH.PSN)
				}
				if i%2 == 0 && f.Has&decode.HasICRC != 0 && f.Has&decode.CRCsCheck != 0 && !f.ICRCOK {
					t.Errorf("frame %d: ICRC does not check", i+1)
				}
				if i%2 == 1 && len(c.frames[i]) > snap && !f.Truncated() {
					t.Errorf("frame %d: cut to %d bytes of %d but not marked truncated (caplen %d, wirelen %d)", i+1, snap, len(c.frames[i]), f.CapLen, f.WireLen)
				}
			}
			var f decode.Frame
			if err := r.Next(&f); !errors.Is(err, io.EOF) {
				t.Errorf("after the last frame: %v", err)
			}
		})
	}
}

// Wireshark's tshark opens what ibcap writes and sees InfiniBand in it.
func TestWriterFilesOpenInTshark(t *testing.T) {
	testenv.MustHaveTool(t, "tshark")
	roce, _ := mixedTraffic(10, false)
	var ib []capfile.Packet
	for i := range 10 {
		p := nativeIBPacket(uint32(i / 5)) // PSNs as mixedTraffic numbers them
		ib = append(ib, capfile.Packet{Data: p, TsNs: int64(i) + 1e18, WireLenBytes: len(p)})
	}
	var eth []capfile.Packet
	for i, f := range roce {
		eth = append(eth, capfile.Packet{Data: f, TsNs: int64(i) + 1e18, WireLenBytes: len(f)})
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		format Format
		src    int
		pkts   []capfile.Packet
	}{
		{"roce.pcapng", FormatPcapNG, decode.LinkTypeEthernet, eth},
		{"roce-erf.pcap", FormatERF, decode.LinkTypeEthernet, eth},
		{"ib.pcap", FormatERF, decode.LinkTypeInfiniBand, ib},
		{"ib.pcapng", FormatPcapNG, decode.LinkTypeInfiniBand, ib},
		{"ib.erf", FormatERFRaw, decode.LinkTypeInfiniBand, ib},
		{"roce.erf", FormatERFRaw, decode.LinkTypeEthernet, eth},
	} {
		path := filepath.Join(dir, c.name)
		writePackets(t, WriterConfig{Path: path, Format: c.format, LinkType: c.src}, c.pkts)
		out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "infiniband.bth.psn").Output()
		if err != nil {
			t.Fatalf("tshark -r %s: %v\n%s", c.name, err, out)
		}
		lines := strings.Fields(string(out))
		if len(lines) != len(c.pkts) {
			t.Fatalf("%s: tshark shows %d BTH PSNs, want %d:\n%s", c.name, len(lines), len(c.pkts), out)
		}
		for i, l := range lines {
			if l != strconv.Itoa(i/5) {
				t.Errorf("%s: frame %d PSN %s, want %d", c.name, i+1, l, i/5)
			}
		}
	}
}

func TestWriterUnwritablePath(t *testing.T) {
	_, err := NewWriter(WriterConfig{Path: filepath.Join(t.TempDir(), "no", "such", "dir", "x.pcap"), LinkType: decode.LinkTypeEthernet})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v, want one that says the directory does not exist", err)
	}
}

func TestWriterConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []WriterConfig{
		{Path: "-", RotateBytes: 1, LinkType: decode.LinkTypeEthernet},
		{Path: filepath.Join(dir, "a"), MaxFiles: 3, LinkType: decode.LinkTypeEthernet},
		{Path: filepath.Join(dir, "b"), Format: FormatIB247, LinkType: decode.LinkTypeEthernet},
		{Path: filepath.Join(dir, "c"), LinkType: 105},
		{Path: ""},
	} {
		if _, err := NewWriter(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// -W keeps a ring of files: names are reused, oldest first.
func TestWriterRotationRing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.pcap")
	frame := rocev2Frame(opSendOnly, 1, 0, 100, false, false)
	var pkts []capfile.Packet
	for i := range 100 {
		pkts = append(pkts, capfile.Packet{Data: frame, TsNs: int64(i+1) * 1e8, WireLenBytes: len(frame)})
	}
	w := writePackets(t, WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet, RotateEveryNs: 1e9, MaxFiles: 3}, pkts)
	if len(w.Files()) != 10 {
		t.Fatalf("%d files opened, want 10 (one per second of packets): %v", len(w.Files()), w.Files())
	}
	if w.Files()[3] != RotatedName(path, 0) {
		t.Errorf("fourth file %s, want the first name again", w.Files()[3])
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "ring-*.pcap"))
	if len(left) != 3 {
		t.Errorf("%d files left, want 3: %v", len(left), left)
	}
	recs, frames := readAll(t, RotatedName(path, 0)) // the tenth file, index 9 % 3 = 0
	if len(recs) != 10 || frames[0].TsNs != 91e8 {
		t.Errorf("last file: %d records, first at %d", len(recs), frames[0].TsNs)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"pcap", "pcapng", "erf-pcap", "erf-raw", "ib247", "auto"} {
		f, err := ParseFormat(s)
		if err != nil || f.String() != s {
			t.Errorf("%s: %v %v", s, f, err)
		}
	}
	if f, err := ParseFormat("erf"); err != nil || f != FormatERF {
		t.Errorf("erf, the old name of erf-pcap: %v %v", f, err)
	}
	if _, err := ParseFormat("json"); err == nil {
		t.Error("json accepted")
	}
}

// A capture onto a symbolic link or a directory is refused (the link's
// target untouched); onto /dev/null or a FIFO it is written through, and
// the device stays what it was.
func TestWriterOutputKinds(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link.pcap")
	os.Symlink(target, link)
	for path, want := range map[string]string{link: "symbolic link", dir: "directory"} {
		if _, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a refusal naming a %s", path, err, want)
		}
	}
	// -C rotation opens its files by the same rule.
	os.Symlink(target, RotatedName(filepath.Join(dir, "r.pcap"), 0))
	if _, err := NewWriter(WriterConfig{Path: filepath.Join(dir, "r.pcap"), RotateBytes: 1 << 20, LinkType: decode.LinkTypeEthernet}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("rotated file onto a link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("link target now %q", b)
	}

	w := writePackets(t, WriterConfig{Path: "/dev/null", LinkType: decode.LinkTypeInfiniBand}, []capfile.Packet{{Data: nativeIBPacket(1)}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v (%v)", fi.Mode(), err)
	}

	fifo := filepath.Join(dir, "live.pcap")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	w = writePackets(t, WriterConfig{Path: fifo, LinkType: decode.LinkTypeInfiniBand}, []capfile.Packet{{Data: nativeIBPacket(1)}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; len(b) < 24+16+len(nativeIBPacket(1)) {
		t.Errorf("the FIFO's reader got %d bytes", len(b))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("FIFO is now %v (%v)", fi.Mode(), err)
	}
}

// A pcapng file says what dumpcap's say of their capture: the program,
// OS and hardware; the interface's name, description, filter and OS; each
// packet's direction where known; and, at every rotation and at the end,
// an Interface Statistics Block with the drops, which capinfos and tshark
// read.
func TestWriterPcapngDescribesCapture(t *testing.T) {
	testenv.MustHaveTool(t, "capinfos")
	testenv.MustHaveTool(t, "tshark")
	roce, _ := mixedTraffic(40, false)
	var pkts []capfile.Packet
	for i, f := range roce {
		dir := decode.DirectionInbound
		if i%2 == 1 {
			dir = decode.DirectionOutbound
		}
		pkts = append(pkts, capfile.Packet{Data: f, TsNs: 1_700_000_000_000_000_000 + int64(i)*1000, WireLenBytes: len(f), Direction: dir})
	}
	path := filepath.Join(t.TempDir(), "roce.pcapng")
	writePackets(t, WriterConfig{Path: path, Format: FormatPcapNG, LinkType: decode.LinkTypeEthernet,
		RotateBytes: 2000,
		SectionOptions: []capfile.NgOption{capfile.NgString(capfile.NgOptSHBHardware, "x86_64"),
			capfile.NgString(capfile.NgOptSHBOS, "linux 6.1"), capfile.NgString(capfile.NgOptSHBUserAppl, "ibcap (ibscope test)")},
		InterfaceOptions: []capfile.NgOption{capfile.NgString(capfile.NgOptIfName, "mlx5_0:1"),
			capfile.NgString(capfile.NgOptIfDescription, "RDMA device mlx5_0 port 1, Ethernet link layer, 100 Gb/sec"),
			capfile.NgFilter("udp dst port 4791"), capfile.NgString(capfile.NgOptIfOS, "linux 6.1")},
		Counts: func() capfile.InterfaceStats {
			return capfile.InterfaceStats{Received: 1000, InterfaceDrops: 7, InterfaceDropsKnown: true, OSDrops: 11}
		},
	}, pkts)
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "roce-*.pcapng"))
	if len(files) < 2 {
		t.Fatalf("rotation at 2000 bytes made %d files, want several", len(files))
	}
	for _, file := range files {
		out, err := exec.Command("capinfos", file).CombinedOutput()
		if err != nil {
			t.Fatalf("capinfos %s: %v\n%s", file, err, out)
		}
		// capinfos 4.0 counts the statistics blocks but does not print them.
		for _, want := range []string{"Capture application: ibcap (ibscope test)", "Capture oper-sys:    linux 6.1",
			"Capture hardware:    x86_64", "Name = mlx5_0:1", "Description = RDMA device mlx5_0 port 1, Ethernet link layer, 100 Gb/sec",
			"Filter string = udp dst port 4791", "Operating system = linux 6.1", "Number of stat entries = 1"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("capinfos %s does not say %q:\n%s", file, want, out)
			}
		}
		// gopacket's pcapng reader reads the statistics block's counts.
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, _, err := r.ReadPacketData(); err != nil {
				break
			}
		}
		f.Close()
		iface, err := r.Interface(0)
		if err != nil {
			t.Fatal(err)
		}
		if st := iface.Statistics; st.PacketsReceived != 1000 || st.PacketsDropped != 7 || st.StartTime.IsZero() || st.EndTime.Before(st.StartTime) {
			t.Errorf("%s: statistics %+v, want 1000 received, 7 dropped by the interface", file, st)
		}
	}
	out, err := exec.Command("tshark", "-r", files[0], "-T", "fields", "-e", "frame.packet_flags_direction").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", files[0], err)
	}
	if got := strings.Fields(string(out)); len(got) < 2 || got[0] != "0x00000001" || got[1] != "0x00000002" {
		t.Errorf("tshark's packet directions %q, want 1 (inbound), 2 (outbound), ...", got)
	}
}

// erf-raw is the raw ERF file tshark -F erf writes, not a pcap: capinfos
// names it so, a -C rotation starts each file with a whole record, and
// ibscope reads the files back as the erf-pcap file of the same packets.
func TestWriterRawERF(t *testing.T) {
	testenv.MustHaveTool(t, "capinfos")
	var ib []capfile.Packet
	for i := range 40 {
		p := nativeIBPacket(uint32(i))
		ib = append(ib, capfile.Packet{Data: p, TsNs: int64(i)*1000 + 1e18, WireLenBytes: len(p)})
	}
	path := filepath.Join(t.TempDir(), "ib.erf")
	writePackets(t, WriterConfig{Path: path, Format: FormatERFRaw, LinkType: decode.LinkTypeInfiniBand, RotateBytes: 1000}, ib)
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "ib-*.erf"))
	if len(files) < 2 {
		t.Fatalf("rotation at 1000 bytes made %d files, want several", len(files))
	}
	total := 0
	for _, file := range files {
		out, err := exec.Command("capinfos", "-t", "-c", "-M", file).CombinedOutput()
		if err != nil {
			t.Fatalf("capinfos %s: %v\n%s", file, err, out)
		}
		if !strings.Contains(string(out), "File type:           erf") {
			t.Errorf("capinfos %s: not a raw ERF file:\n%s", file, out)
		}
		_, n, _ := strings.Cut(string(out), "Number of packets:")
		k, err := strconv.Atoi(strings.TrimSpace(strings.Split(n, "\n")[0]))
		if err != nil {
			t.Fatalf("capinfos %s: no packet count:\n%s", file, out)
		}
		total += k
	}
	if total != len(ib) {
		t.Errorf("the raw ERF files hold %d packets, want %d", total, len(ib))
	}
	// ibscope reads them back as the erf-pcap file of the same packets.
	twin := filepath.Join(filepath.Dir(path), "ib.pcap")
	writePackets(t, WriterConfig{Path: twin, Format: FormatERF, LinkType: decode.LinkTypeInfiniBand}, ib)
	_, want := readAll(t, twin)
	var got []decode.Frame
	for _, file := range files {
		_, frames := readAll(t, file)
		got = append(got, frames...)
	}
	if len(got) != len(want) {
		t.Fatalf("ibscope reads %d frames from the raw ERF files, %d from the erf-pcap twin", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.TsNs != w.TsNs || g.Transport != w.Transport || g.BTH.PSN != w.BTH.PSN || g.CapLen != w.CapLen || g.WireLen != w.WireLen {
			t.Fatalf("frame %d: raw ERF %v PSN %d at %d ns, %d of %d bytes; erf-pcap %v PSN %d at %d ns, %d of %d bytes", i+1,
				g.Transport, g.BTH.PSN, g.TsNs, g.CapLen, g.WireLen, w.Transport, w.BTH.PSN, w.TsNs, w.CapLen, w.WireLen)
		}
	}
}

// --time-stamp-precision micro: pcap with the microsecond magic, or pcapng
// with if_tsresol 6, whose times tshark reads to the us (the ns cut off).
func TestWriterMicroseconds(t *testing.T) {
	testenv.MustHaveTool(t, "tshark")
	roce, _ := mixedTraffic(4, false)
	var pkts []capfile.Packet
	for i, f := range roce {
		pkts = append(pkts, capfile.Packet{Data: f, TsNs: 1_700_000_000_123_456_789 + int64(i)*1_000_001, WireLenBytes: len(f)})
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		format Format
		magic  []byte
	}{
		{"micro.pcap", FormatPcap, []byte{0xd4, 0xc3, 0xb2, 0xa1}},
		{"micro.pcapng", FormatPcapNG, nil},
	} {
		path := filepath.Join(dir, c.name)
		writePackets(t, WriterConfig{Path: path, Format: c.format, LinkType: decode.LinkTypeEthernet, Micro: true}, pkts)
		if c.magic != nil {
			b, err := os.ReadFile(path)
			if err != nil || len(b) < 4 || string(b[:4]) != string(c.magic) {
				t.Errorf("%s: magic % x, want % x", c.name, b[:min(4, len(b))], c.magic)
			}
		}
		out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "frame.time_epoch").Output()
		if err != nil {
			t.Fatalf("tshark -r %s: %v", c.name, err)
		}
		got := strings.Fields(string(out))
		if len(got) != len(pkts) {
			t.Fatalf("%s: tshark shows %d times, want %d", c.name, len(got), len(pkts))
		}
		for i, g := range got {
			us := pkts[i].TsNs / 1000
			want := fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
			// tshark prints the fraction to the file's precision, or to ns.
			if g != want && g != want+"000" {
				t.Errorf("%s: frame %d at %s, want %s", c.name, i+1, g, want)
			}
		}
	}
}

// FormatAuto follows the file's extension, as dumpcap's names do; a named
// format does not.
func TestFormatForFile(t *testing.T) {
	for _, c := range []struct {
		f    Format
		path string
		want Format
	}{
		{FormatAuto, "x.pcapng", FormatPcapNG},
		{FormatAuto, "X.PCAPNG", FormatPcapNG},
		{FormatAuto, "x.erf", FormatERFRaw},
		{FormatAuto, "x.pcap", FormatAuto},
		{FormatAuto, "-", FormatAuto},
		{FormatPcap, "x.pcapng", FormatPcap},
		{FormatERF, "x.erf", FormatERF},
	} {
		if got := c.f.ForFile(c.path); got != c.want {
			t.Errorf("%v for %s: %v, want %v", c.f, c.path, got, c.want)
		}
	}
}

// A pcapng capture survives Wireshark's own tools: split with editcap -c
// and put back together with mergecap, it reads back with the same frames
// (bytes, times to the ns, directions) on the one interface it named.
// (editcap and mergecap 4.0 do not carry the statistics blocks over.)
func TestWriterPcapngEditcapMergecap(t *testing.T) {
	testenv.MustHaveTool(t, "editcap")
	testenv.MustHaveTool(t, "mergecap")
	testenv.MustHaveTool(t, "capinfos")
	roce, _ := mixedTraffic(40, false)
	var pkts []capfile.Packet
	for i, f := range roce {
		dir := decode.DirectionInbound
		if i%3 == 0 {
			dir = decode.DirectionOutbound
		}
		pkts = append(pkts, capfile.Packet{Data: f, TsNs: 1_700_000_000_000_000_000 + int64(i)*1001, WireLenBytes: len(f), Direction: dir})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "roce.pcapng")
	writePackets(t, WriterConfig{Path: path, Format: FormatPcapNG, LinkType: decode.LinkTypeEthernet,
		SectionOptions:   []capfile.NgOption{capfile.NgString(capfile.NgOptSHBUserAppl, "ibcap (ibscope test)")},
		InterfaceOptions: []capfile.NgOption{capfile.NgString(capfile.NgOptIfName, "mlx5_0:1")},
		Counts:           func() capfile.InterfaceStats { return capfile.InterfaceStats{Received: 40} },
	}, pkts)
	if out, err := exec.Command("editcap", "-c", "15", path, filepath.Join(dir, "part.pcapng")).CombinedOutput(); err != nil {
		t.Fatalf("editcap -c 15: %v\n%s", err, out)
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "part_*.pcapng"))
	if len(parts) != 3 {
		t.Fatalf("editcap -c 15 of 40 packets made %d files, want 3: %v", len(parts), parts)
	}
	merged := filepath.Join(dir, "merged.pcapng")
	if out, err := exec.Command("mergecap", append([]string{"-w", merged}, parts...)...).CombinedOutput(); err != nil {
		t.Fatalf("mergecap: %v\n%s", err, out)
	}
	want, wantFrames := readAll(t, path)
	for _, file := range append(parts, merged) {
		out, err := exec.Command("capinfos", file).CombinedOutput()
		if err != nil {
			t.Fatalf("capinfos %s: %v\n%s", file, err, out)
		}
		if !strings.Contains(string(out), "Number of interfaces in file: 1") || !strings.Contains(string(out), "Name = mlx5_0:1") {
			t.Errorf("%s: not the one interface mlx5_0:1:\n%s", filepath.Base(file), out)
		}
	}
	got, gotFrames := readAll(t, merged)
	if len(got) != len(want) {
		t.Fatalf("merged file holds %d frames, the capture %d", len(got), len(want))
	}
	for i := range want {
		g, w := gotFrames[i], wantFrames[i]
		if !bytes.Equal(got[i], want[i]) || g.TsNs != w.TsNs || g.Dir != w.Dir || g.WireLen != w.WireLen {
			t.Fatalf("frame %d: merged %x at %d ns, direction %d; captured %x at %d ns, direction %d", i+1, got[i], g.TsNs, g.Dir, want[i], w.TsNs, w.Dir)
		}
	}
}
