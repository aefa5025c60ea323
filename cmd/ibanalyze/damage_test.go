package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// damageRecord is one record of a hand-made pcap: its header's fields as
// written, damaged or not, and its bytes.
type damageRecord struct {
	sec, nsec, capLen, wireLen uint32
	data                       []byte
}

// damagedCapture is a nanosecond Ethernet pcap holding an RC exchange of
// RDMA WRITE ONLY requests from 192.168.7.1 (QP 0x11) each ACKed by
// 192.168.7.2 (QP 0x22), with every kind of damage a reader meets
// between them; what each costs is in damagedInput.
func damagedCapture(t *testing.T, dir string) string {
	t.Helper()
	recs := damagedRecords(t)
	le := binary.LittleEndian
	file := nsPcapHeader()
	for i, r := range recs {
		file = le.AppendUint32(le.AppendUint32(file, r.sec), r.nsec)
		file = le.AppendUint32(le.AppendUint32(file, r.capLen), r.wireLen)
		if i == len(recs)-1 || r.capLen == uint32(len(r.data)) {
			file = append(file, r.data...)
		}
	}
	path := filepath.Join(dir, "damaged.pcap")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// nsPcapHeader is the header of a nanosecond pcap of Ethernet frames,
// snap length 65535, which the tests that build records of their own
// append to.
func nsPcapHeader() []byte {
	le := binary.LittleEndian
	file := le.AppendUint32(nil, 0xa1b23c4d)
	file = le.AppendUint16(le.AppendUint16(file, 2), 4)
	file = le.AppendUint32(le.AppendUint32(file, 0), 0)
	return le.AppendUint32(le.AppendUint32(file, 65535), uint32(decode.LinkTypeEthernet))
}

// spoilRecord damages every so many of the records a test builds, by its
// index i: an original length below the captured one (undecodable), a cut
// at 60 bytes, or a payload byte changed (a bad ICRC). It says the
// captured and original lengths to write and whether it spoilt the record.
func spoilRecord(i int, data []byte) (capLen, wireLen int, spoilt bool) {
	capLen, wireLen = len(data), len(data)
	switch {
	case i%97 == 5:
		return capLen, capLen - 1, true
	case i%61 == 7:
		return min(capLen, 60), wireLen, true
	case i%89 == 3:
		data[len(data)-10] ^= 0xff
		return capLen, wireLen, true
	}
	return capLen, wireLen, false
}

// appendNsRecord appends the i-th record (at 1000+i/1000 s and i%1000 µs) to a
// nanosecond pcap.
func appendNsRecord(file []byte, i int, data []byte, capLen, wireLen int) []byte {
	le := binary.LittleEndian
	file = le.AppendUint32(le.AppendUint32(file, uint32(1000+i/1000)), uint32(i%1000*1000))
	return append(le.AppendUint32(le.AppendUint32(file, uint32(capLen)), uint32(wireLen)), data[:capLen]...)
}

// damagedCaptureNG is damagedCapture as a pcapng: each record an enhanced
// packet block, but the one whose nanoseconds are a second or more a
// simple packet block (no time), and the last header a block whose length
// is not a multiple of 4, which cannot be framed either.
func damagedCaptureNG(t *testing.T, dir string) string {
	t.Helper()
	recs := damagedRecords(t)
	le := binary.LittleEndian
	file := testcap.PcapngHead(nil)
	for _, r := range recs[:len(recs)-2] {
		if r.nsec >= 1e9 {
			file = testcap.PcapngBlock(file, 3, append(le.AppendUint32(nil, r.wireLen), r.data...))
			continue
		}
		ts := uint64(r.sec)*1e9 + uint64(r.nsec)
		b := le.AppendUint32(nil, 0)
		b = le.AppendUint32(le.AppendUint32(b, uint32(ts>>32)), uint32(ts))
		b = le.AppendUint32(le.AppendUint32(b, r.capLen), r.wireLen)
		file = testcap.PcapngBlock(file, 6, append(b, r.data...))
	}
	file = le.AppendUint32(le.AppendUint32(file, 6), 1001) // a block length no block can have
	file = append(file, make([]byte, 1001)...)
	path := filepath.Join(dir, "damaged.pcapng")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// damagedRecords are the records of damagedCapture.
func damagedRecords(t *testing.T) []damageRecord {
	t.Helper()
	var recs []damageRecord
	ts := testcap.BaseNs
	add := func(data []byte, capLen, wireLen int) {
		ts += 1000
		recs = append(recs, damageRecord{sec: uint32(ts / 1e9), nsec: uint32(ts % 1e9), capLen: uint32(capLen), wireLen: uint32(wireLen), data: data})
	}
	whole := func(b []byte) { add(b, len(b), len(b)) }
	write := func(i int) testcap.Packet {
		return testcap.Packet{Src: 1, Dst: 2, QP: 0x22, PSN: uint32(100 + i), Op: 0x0a, AckReq: true, Payload: 1024, DMALen: 1024}
	}
	ack := func(i int) []byte {
		return testcap.RoCEFrame(t, testcap.Packet{Src: 2, Dst: 1, QP: 0x11, PSN: uint32(100 + i), Op: 0x11, MSN: uint32(i + 1)})
	}
	for i := range damageWrites {
		w := write(i)
		switch i {
		case 2: // cut by the snap length inside the payload: decoded, cut
			b := testcap.RoCEFrame(t, w)
			add(b[:120], 120, len(b))
		case 4: // cut by its tool, which recorded the cut length as the original
			b := testcap.RoCEFrame(t, w)
			add(b[:120], 120, 120)
		case 6: // its ICRC is bad: a packet, counted as such
			w.BadICRC = true
			whole(testcap.RoCEFrame(t, w))
		default:
			whole(testcap.RoCEFrame(t, w))
		}
		whole(ack(i))
		// The damage, one kind after each exchange.
		switch i {
		case 0: // the record header's original length is below its captured length
			b := testcap.RoCEFrame(t, write(50))
			add(b, len(b), len(b)-1)
		case 1: // the record header's nanoseconds are a second or more
			b := testcap.RoCEFrame(t, write(51))
			recs = append(recs, damageRecord{sec: uint32(ts / 1e9), nsec: 1_500_000_000, capLen: uint32(len(b)), wireLen: uint32(len(b)), data: b})
		case 2: // cut by the snap length inside the BTH
			b := testcap.RoCEFrame(t, write(52))
			add(b[:14+20+8+6], 14+20+8+6, len(b))
		case 3: // IPv4 header garbage: header length 8 bytes
			b := testcap.RoCEFrame(t, write(53))
			b[14] = 0x42
			whole(b)
		case 4: // UDP header garbage: length 3
			b := testcap.RoCEFrame(t, write(54))
			binary.BigEndian.PutUint16(b[14+20+4:], 3)
			whole(b)
		case 5: // not IB: ARP and TCP
			whole(testcap.Serialize(t, &layers.Ethernet{SrcMAC: testcap.HostMAC(1), DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP},
				&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4, Operation: 1,
					SourceHwAddress: testcap.HostMAC(1), SourceProtAddress: []byte{192, 168, 7, 1}, DstHwAddress: make([]byte, 6), DstProtAddress: []byte{192, 168, 7, 2}}))
			ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: []byte{192, 168, 7, 1}, DstIP: []byte{192, 168, 7, 2}}
			tcp := &layers.TCP{SrcPort: 40000, DstPort: 22, Seq: 1, SYN: true, Window: 1024}
			if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
				t.Fatal(err)
			}
			whole(testcap.Serialize(t, &layers.Ethernet{SrcMAC: testcap.HostMAC(1), DstMAC: testcap.HostMAC(2), EthernetType: layers.EthernetTypeIPv4}, ip, tcp))
		case 6: // a BTH of an opcode no transport defines
			b := testcap.RoCEFrame(t, write(56))
			b[14+20+8] = 0x1f
			whole(b)
		}
	}
	// Last, a record header claiming more than any record may hold (a
	// negative length read as unsigned): nothing after it can be framed,
	// so the file ends there, and the exchange behind it is not read.
	b := testcap.RoCEFrame(t, write(57))
	return append(recs, damageRecord{sec: uint32(ts / 1e9), capLen: 0xfffffff0, wireLen: 0xfffffff0}, damageRecord{sec: uint32(ts / 1e9), capLen: uint32(len(b)), wireLen: uint32(len(b)), data: b})
}

const damageWrites = 8

// damagedInput is what every analysis must say it read of damagedCapture:
// 24 frames before the record header that ends the file; the 16 packets of
// the exchange (two of them cut after their headers, one with a bad ICRC);
// ARP, TCP and an IPv4 header whose length field says 8 bytes are not IB;
// two records with impossible headers, a UDP length of 3 and an unknown
// opcode could not be decoded; one frame is cut inside its BTH.
var damagedInput = map[string]float64{"frames": 24, "packets": 16, "not_ib": 3, "link_packets": 0,
	"decode_errors": 4, "cut_headers": 1, "file_errors": 1, "no_time": 0}

const damagedSummary = "could not use 4 frames not decodable, 1 frame cut inside its headers, 1 file damaged (not read to its end)"

// TestDamagedCaptureEveryAnalysis (issue 21 item 4): on one file mixing
// every kind of damage a reader meets, every command that reads packets
// reads to the end of what can be framed, reports exactly the good frames,
// names each unusable one on stderr, counts them in its JSON and its text
// summary, and exits 1.
func TestDamagedCaptureEveryAnalysis(t *testing.T) {
	dir := t.TempDir()
	path := damagedCapture(t, dir)
	named := []string{
		"frame 3 (record at byte offset 1216): record header: original length 1097 below captured length 1098; frame skipped",
		"frame 6 (record at byte offset 3522): record header: nanoseconds field 1500000000 is a second or more; frame skipped",
		"frame 15 (record at byte offset 7434): byte 38 of the frame: UDP length 3 disagrees with the IP payload length 1064",
		"frame 22 (record at byte offset 11084): byte 42 of the frame: unknown opcode 0x1f",
		"frame 25 (byte offset 13390): record claims 4294967280 captured bytes; the file is damaged",
	}
	check := func(t *testing.T, stderr string, code int) {
		t.Helper()
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		for _, want := range named {
			if !strings.Contains(stderr, path+": "+want) {
				t.Errorf("stderr does not name %q:\n%s", want, stderr)
			}
		}
	}
	checkInput := func(t *testing.T, in map[string]any) {
		t.Helper()
		for k, want := range damagedInput {
			if got, _ := in[k].(float64); got != want {
				t.Errorf("input.%s = %v, want %v", k, in[k], want)
			}
		}
	}
	jsonOf := func(t *testing.T, stdout string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(stdout), &m); err != nil {
			t.Fatalf("%v:\n%s", err, stdout)
		}
		return m
	}

	for _, cmd := range []string{"flows", "ipd", "pfc", "hops", "cm"} {
		t.Run(cmd+" --json", func(t *testing.T) {
			stdout, stderr, code := run(t, cmd, "--json", path)
			check(t, stderr, code)
			m := jsonOf(t, stdout)
			in, _ := m["input"].(map[string]any)
			checkInput(t, in)
			switch cmd {
			case "flows":
				packets := 0.0
				for _, f := range m["flows"].([]any) {
					packets += f.(map[string]any)["packets"].(float64)
				}
				if packets != 16 {
					t.Errorf("flows hold %v packets, want 16", packets)
				}
			case "ipd":
				if m["counted"] != 8.0 {
					t.Errorf("ipd counted %v data packets, want the 8 WRITEs", m["counted"])
				}
			}
		})
		t.Run(cmd, func(t *testing.T) {
			stdout, stderr, code := run(t, cmd, path)
			check(t, stderr, code)
			if !strings.Contains(stderr, path+": 1 IB/RoCE frame cut inside the IB headers") {
				t.Errorf("the frame cut inside its BTH is not told:\n%s", stderr)
			}
			first, _, _ := strings.Cut(stdout, "\n")
			if !strings.HasPrefix(first, path+": 24 frames, ") || !strings.HasSuffix(first, "; "+damagedSummary) ||
				(cmd == "flows" || cmd == "ipd") && !strings.Contains(first, ", 16 IB/RoCE packets") {
				t.Errorf("summary %q, want 24 frames, the 16 packets and %q", first, damagedSummary)
			}
		})
	}
	t.Run("decode", func(t *testing.T) {
		stdout, stderr, code := run(t, "decode", "--summary", "--json", path)
		check(t, stderr, code)
		m := jsonOf(t, stdout)
		// decode lists the frame cut inside its BTH with what it has: 17.
		for k, want := range map[string]float64{"frames": 24, "decoded": 17, "skipped": 3, "errors": 4, "cut": 3, "cut_headers": 1, "file_errors": 1, "icrc_bad": 1} {
			if m[k] != want {
				t.Errorf("decode summary %s = %v, want %v", k, m[k], want)
			}
		}
	})
	t.Run("export", func(t *testing.T) {
		out := filepath.Join(dir, "rows.jsonl")
		stdout, stderr, code := run(t, "export", "--json", "-o", out, path)
		check(t, stderr, code)
		m := jsonOf(t, stdout)
		if m["rows"] != 24.0 || m["decode_errors"] != 4.0 || m["file_errors"] != 1.0 {
			t.Errorf("export summary %v, want 24 rows, 4 not decodable, 1 damaged file", m)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n != 24 {
			t.Errorf("export wrote %d rows, want one for each of the 24 frames read", n)
		}
	})
	t.Run("buffer", func(t *testing.T) {
		recv := filepath.Join(dir, "receiver.pcap")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recv, b, 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := run(t, "buffer", "--rate", "EDR", "--json", path, recv)
		check(t, stderr, code)
		m := jsonOf(t, stdout)
		s := m["senders"].([]any)[0].(map[string]any)
		if s["packets"] != 8.0 || s["matched"] != 8.0 {
			t.Errorf("buffer: sender packets %v, matched %v; want the 8 WRITEs", s["packets"], s["matched"])
		}
		for _, k := range []string{"sender_input", "receiver_input"} {
			in, _ := m[k].(map[string]any)
			checkInput(t, in)
		}
		stdout, _, _ = run(t, "buffer", "--rate", "EDR", path, recv)
		for _, p := range []string{path, recv} {
			if !strings.Contains(stdout, "\n"+p+": "+damagedSummary+"\n") {
				t.Errorf("buffer's report does not say what it could not use of %s:\n%s", p, stdout)
			}
		}
	})
}

// TestUntimedFrameCounted: a pcapng simple packet block (no time) is
// skipped by the analyses, counted in no_time and in the summary, and the
// exit status is 1.
func TestUntimedFrameCounted(t *testing.T) {
	pkts := testcap.Stream(4, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	path := testcap.WriteUntimed(t, "spb.pcapng", pkts, 2)
	stdout, stderr, code := run(t, "flows", "--json", path)
	var m struct {
		Input map[string]any `json:"input"`
	}
	if err := json.Unmarshal([]byte(stdout), &m); err != nil || code != 1 || m.Input["no_time"] != 1.0 || m.Input["packets"] != 3.0 {
		t.Errorf("flows --json: exit %d, input %v (%v)\n%s", code, m.Input, err, stderr)
	}
	stdout, _, _ = run(t, "ipd", path)
	if first, _, _ := strings.Cut(stdout, "\n"); !strings.HasSuffix(first, "; could not use 1 frame without a time") {
		t.Errorf("ipd summary %q does not count the untimed frame", first)
	}
}

// TestDamagedLinkCaptureCredits: credits, which reads a native IB link
// with its flow-control packets, reads past an impossible record header in
// the middle of the file and stops only at one that cannot be framed at its
// end; its JSON and its summary count both, and it exits 1.
func TestDamagedLinkCaptureCredits(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pcaps/ib_native_erf.pcap")
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	records := 0
	for off := 24; off+16 <= len(b); off += 16 + int(le.Uint32(b[off+8:])) {
		records++
		if records == 3 { // original length below captured length
			le.PutUint32(b[off+12:], le.Uint32(b[off+8:])-1)
		}
	}
	b = append(b, make([]byte, 16)...) // a last record header of 2 GiB
	le.PutUint32(b[len(b)-8:], 1<<31)
	path := filepath.Join(t.TempDir(), "damaged-link.pcap")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "credits", "--json", path)
	var rep struct {
		Frames       int `json:"frames"`
		FCPs         int `json:"fcps"`
		DataPackets  int `json:"data_packets"`
		DecodeErrors int `json:"decode_errors"`
		FileErrors   int `json:"file_errors"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if code != 1 || rep.Frames != records-1 || rep.DecodeErrors != 1 || rep.FileErrors != 1 || rep.FCPs+rep.DataPackets != records-1 {
		t.Errorf("credits --json: exit %d, %+v; want the %d good frames, 1 not decodable, 1 damaged file\n%s", code, rep, records-1, stderr)
	}
	stdout, _, _ = run(t, "credits", path)
	if first, _, _ := strings.Cut(stdout, "\n"); !strings.HasSuffix(first, "; could not use 1 frame not decodable, 1 file damaged (not read to its end)") {
		t.Errorf("credits summary %q does not say what it could not use", first)
	}
}

// TestDamagedTick: tick reads past a frame whose record header is
// impossible (the 10th of the simulated incast's sender capture), counts it
// in its input and its summary, estimates the tick from the rest and exits 1.
func TestDamagedTick(t *testing.T) {
	dir := simIncast(t)
	s1 := filepath.Join(dir, "s1.pcap")
	tel := filepath.Join(dir, "perfquery.txt")
	good := runOK(t, "tick", "--json", s1, "--telemetry", tel, "--rate", "QDR")
	b, err := os.ReadFile(s1)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	off := 24
	for range 9 {
		off += 16 + int(le.Uint32(b[off+8:]))
	}
	le.PutUint32(b[off+12:], le.Uint32(b[off+8:])-1) // original length below captured length
	damaged := filepath.Join(dir, "s1-damaged.pcap")
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "tick", "--json", damaged, "--telemetry", tel, "--rate", "QDR")
	var rep, want struct {
		Packets int            `json:"packets"`
		Input   map[string]any `json:"input"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := json.Unmarshal([]byte(good), &want); err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(stderr, damaged+": frame 10 (record at byte offset ") || rep.Input["decode_errors"] != 1.0 ||
		rep.Input["frames"] != want.Input["frames"] || rep.Packets > want.Packets || rep.Packets < want.Packets-1 {
		t.Errorf("tick: exit %d, %d packets (undamaged %d), input %v\n%s", code, rep.Packets, want.Packets, rep.Input, stderr)
	}
	stdout, _, _ = run(t, "tick", damaged, "--telemetry", tel, "--rate", "QDR")
	if first, _, _ := strings.Cut(stdout, "\n"); !strings.HasSuffix(first, "; could not use 1 frame not decodable") {
		t.Errorf("tick summary %q does not say what it could not use", first)
	}
}

// TestDamagedPcapngFlows: the same damage in a pcapng (the impossible
// nanoseconds become a simple packet block without time) gives flows the
// same 16 packets, each unusable frame counted where it belongs.
func TestDamagedPcapngFlows(t *testing.T) {
	path := damagedCaptureNG(t, t.TempDir())
	stdout, stderr, code := run(t, "flows", "--json", path)
	var m struct {
		Input map[string]any `json:"input"`
	}
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := map[string]float64{"frames": 24, "packets": 16, "not_ib": 3, "decode_errors": 3, "no_time": 1, "cut_headers": 1, "file_errors": 1}
	for k, v := range want {
		if m.Input[k] != v {
			t.Errorf("input.%s = %v, want %v", k, m.Input[k], v)
		}
	}
	if code != 1 || !strings.Contains(stderr, "no timestamp (pcapng simple packet block)") || !strings.Contains(stderr, "the rest of this file is not read") {
		t.Errorf("exit %d, want 1 with the untimed frame and the damaged block named:\n%s", code, stderr)
	}
}
