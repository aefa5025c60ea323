package capture

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// openInNS opens an AF_PACKET capture on the namespace's capture side.
func openInNS(t *testing.T, ns *testnetns.NS, cfg *Config) Source {
	t.Helper()
	var src Source
	if err := ns.Do(t, func() (err error) {
		src, err = Open(ns.Capture, cfg)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// captureReplay captures on a fresh namespace while tcpreplay sends the
// frames, and returns the report and the file.
func captureReplay(t *testing.T, frames [][]byte, cfg *Config, wcfg WriterConfig, opts RunOptions) (Report, *Writer) {
	t.Helper()
	ns := newVethNS(t)
	testenv.MustHaveTool(t, "tcpreplay")
	dir := t.TempDir()
	in := filepath.Join(dir, "sent.pcap")
	writeTestPcap(t, in, frames)
	src := openInNS(t, ns, cfg)
	if wcfg.Path == "" {
		wcfg.Path = filepath.Join(dir, "captured.pcap")
	}
	return captureWhile(t, src, wcfg, opts, func() { ns.Replay(t, in) })
}

// captureWhile runs a capture of src into a new writer of wcfg (src's link
// type) while send sends, then stops it and returns the report and the
// closed writer.
func captureWhile(t *testing.T, src Source, wcfg WriterConfig, opts RunOptions, send func()) (Report, *Writer) {
	t.Helper()
	return captureWhileWriting(t, src, wcfg, opts, func(*Writer) { send() })
}

// captureWhileWriting is captureWhile whose send sees the writer, to wait
// for what it has written.
func captureWhileWriting(t *testing.T, src Source, wcfg WriterConfig, opts RunOptions, send func(*Writer)) (Report, *Writer) {
	t.Helper()
	wcfg.LinkType = src.LinkType()
	w, err := NewWriter(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		rep Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := Run(ctx, src, w, opts)
		done <- result{rep, err}
	}()
	send(w)
	cancel() // Run drains the ring before it returns
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return res.rep, w
}

// Every RoCE frame sent is captured, byte for byte, in order; the rest are
// filtered out by the kernel.
func TestAFPacketCapturesEveryRoCEFrame(t *testing.T) {
	roce, all := mixedTraffic(3000, true)
	rep, w := captureReplay(t, all, nil, WriterConfig{}, RunOptions{})
	recs, frames := readAll(t, w.Files()[0])
	if len(recs) != len(roce) {
		t.Fatalf("captured %d frames, sent %d RoCE (and %d others); report:\n%s", len(recs), len(roce), len(all)-len(roce), rep.String())
	}
	for i := range roce {
		if !bytes.Equal(recs[i], roce[i]) {
			t.Fatalf("frame %d differs:\n got %x\nwant %x", i, recs[i], roce[i])
		}
		if i > 0 && frames[i].TsNs < frames[i-1].TsNs {
			t.Errorf("frame %d: timestamp %d before the previous %d", i, frames[i].TsNs, frames[i-1].TsNs)
		}
	}
	if rep.Written != uint64(len(roce)) || rep.KernelDrops != 0 || rep.Captured != rep.Written+rep.Filtered {
		t.Errorf("report does not account for the frames:\n%s", rep.String())
	}
	// The kernel kept the other frames out uncounted: no "0 packets
	// filtered out" (there were some), nothing said of filtering at all.
	if !rep.KernelFilter || rep.Filtered != 0 || strings.Contains(rep.String(), "filtered") {
		t.Errorf("the kernel filter's frames reported as a count:\n%s", rep.String())
	}
}

// The snap length cuts frames but keeps their wire length.
func TestAFPacketSnapLen(t *testing.T) {
	roce, all := mixedTraffic(500, false)
	_, w := captureReplay(t, all, &Config{SnapLenBytes: 128}, WriterConfig{SnapLenBytes: 128}, RunOptions{})
	recs, frames := readAll(t, w.Files()[0])
	if len(recs) != len(roce) {
		t.Fatalf("captured %d, sent %d", len(recs), len(roce))
	}
	for i := range roce {
		want := roce[i][:min(128, len(roce[i]))]
		if !bytes.Equal(recs[i], want) || frames[i].WireLen != len(roce[i]) {
			t.Fatalf("frame %d: %d bytes of %d on the wire; want %d of %d", i, len(recs[i]), frames[i].WireLen, len(want), len(roce[i]))
		}
	}
}

// --qp and --opcode keep only the matching packets, and the report counts
// the others as filtered.
func TestAFPacketHeaderFilter(t *testing.T) {
	roce, all := mixedTraffic(500, false)
	flt := &Filter{QPs: []uint32{0x12, 0x13}, Opcodes: []decode.Opcode{opRDMAWriteFirst}}
	rep, w := captureReplay(t, all, nil, WriterConfig{}, RunOptions{Filter: flt})
	var want [][]byte
	for i, f := range roce {
		if i%5 == 1 {
			want = append(want, f)
		}
	}
	recs, _ := readAll(t, w.Files()[0])
	if len(recs) != len(want) {
		t.Fatalf("kept %d, want %d; report:\n%s", len(recs), len(want), rep.String())
	}
	for i := range want {
		if !bytes.Equal(recs[i], want[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if rep.Filtered < uint64(len(roce)-len(want)) {
		t.Errorf("filtered %d, want at least %d", rep.Filtered, len(roce)-len(want))
	}
}

// Size rotation splits the capture into files that together hold every
// frame, in order.
func TestAFPacketRotation(t *testing.T) {
	roce, all := mixedTraffic(2000, false)
	_, w := captureReplay(t, all, nil, WriterConfig{RotateBytes: 200_000}, RunOptions{})
	if len(w.Files()) < 3 {
		t.Fatalf("%d files, want several: %v", len(w.Files()), w.Files())
	}
	var got [][]byte
	for _, f := range w.Files() {
		recs, _ := readAll(t, f)
		got = append(got, recs...)
	}
	if len(got) != len(roce) {
		t.Fatalf("files hold %d frames, sent %d", len(got), len(roce))
	}
	for i := range roce {
		if !bytes.Equal(got[i], roce[i]) {
			t.Fatalf("frame %d differs across rotation", i)
		}
	}
}

// With --all the non-RoCE frames are kept too.
func TestAFPacketAll(t *testing.T) {
	_, all := mixedTraffic(300, false)
	rep, w := captureReplay(t, all, &Config{All: true}, WriterConfig{}, RunOptions{})
	recs, _ := readAll(t, w.Files()[0])
	// No kernel filter: nothing kept out uncounted, so the count is said.
	if rep.KernelFilter || !strings.Contains(rep.String(), "\n0 packets filtered out\n") {
		t.Errorf("with --all:\n%s", rep.String())
	}
	// The namespace's own traffic (IPv6 neighbour discovery) may add frames.
	i := 0
	for _, r := range recs {
		if i < len(all) && bytes.Equal(r, all[i]) {
			i++
		}
	}
	if i != len(all) {
		t.Fatalf("found %d of the %d frames sent, in order, among %d captured", i, len(all), len(recs))
	}
}

// A ring too small for a burst loses frames, and the report says how many:
// every frame sent is written, dropped by the kernel, or dropped on the
// veth's backlog before any capture could see it.
func TestAFPacketDropsAreCounted(t *testing.T) {
	ns := newVethNS(t)
	src := openInNS(t, ns, &Config{RingBytes: 1}) // the smallest ring: 4 blocks of 1 MiB
	var frames [][]byte
	for i := range 100 {
		frames = append(frames, rocev2Frame(opSendOnly, 0x11, uint32(i), 1400, false, false))
	}
	tx := ns.OpenTx(t)
	defer tx.Close()
	before := ns.RxDropped(t)
	const sent = 20_000 // 29 MB into a 4 MiB ring nobody reads yet
	if _, err := tx.Send(frames, sent, 100_000); err != nil {
		t.Fatal(err)
	}
	pathDrops := uint64(ns.RxDropped(t) - before)
	w, err := NewWriter(WriterConfig{Path: filepath.Join(t.TempDir(), "d.pcap"), LinkType: src.LinkType()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // only drain what the ring holds
	rep, err := Run(ctx, src, w, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if rep.KernelDrops == 0 {
		t.Errorf("no kernel drops reported for %d frames into a 4 MiB ring:\n%s", sent, rep.String())
	}
	if got := rep.Written + rep.KernelDrops + pathDrops; got != sent {
		t.Errorf("written %d + kernel drops %d + backlog drops %d = %d, sent %d", rep.Written, rep.KernelDrops, pathDrops, got, sent)
	}
	t.Logf("sent %d: written %d, kernel drops %d, backlog drops %d", sent, rep.Written, rep.KernelDrops, pathDrops)
}

// RoCE frames under 0, 1 and 2 VLAN tags (802.1Q, 802.1ad, QinQ) are all
// kept, byte for byte with their tags (the kernel strips the outer tag and
// the ring puts it back, so user space sees one tag more than the kernel
// filter does): QinQ used to be counted as filtered out. A 0x9100 tag, which
// the decoder does not read, stays out.
func TestAFPacketVLANTags(t *testing.T) {
	ns := newVethNS(t)
	src := openInNS(t, ns, nil)
	roce, _ := mixedTraffic(10, false)
	var sent, want [][]byte
	for _, tags := range [][]uint16{nil, {0x8100}, {0x88A8}, {0x88A8, 0x8100}, {0x8100, 0x8100}, {0x9100}} {
		for _, f := range roce {
			sent = append(sent, withTags(f, tags...))
			if len(tags) == 0 || tags[0] != 0x9100 {
				want = append(want, sent[len(sent)-1])
			}
		}
	}
	tx := ns.OpenTx(t)
	defer tx.Close()
	rep, w := captureWhileWriting(t, src, WriterConfig{Path: filepath.Join(t.TempDir(), "vlan.pcap")}, RunOptions{}, func(w *Writer) {
		if _, err := tx.Send(sent, len(sent), 10_000); err != nil {
			t.Fatal(err)
		}
		// Until the periodic flush wrote them all: the ring's block
		// timeout hands them over however busy the machine is.
		testenv.WaitFor(t, 0, "the frames sent in the file", func() bool { n, _ := w.Written(); return n >= uint64(len(want)) })
	})
	recs, _ := readAll(t, w.Files()[0])
	if len(recs) != len(want) {
		t.Fatalf("captured %d frames, want the %d RoCE ones of %d sent; report:\n%s", len(recs), len(want), len(sent), rep.String())
	}
	for i := range want {
		if !bytes.Equal(recs[i], want[i]) {
			t.Errorf("frame %d differs:\n got %x\nwant %x", i, recs[i], want[i])
		}
	}
}

// An interface deleted mid-capture ends the capture with an error that
// names it and says what happened, whether it was up or already down
// (then the kernel tells the socket nothing: the capture finds out by
// looking); the frames captured before are flushed to the file. Run runs
// in the namespace, as ibcap runs in the interface's.
func TestAFPacketInterfaceGone(t *testing.T) {
	for _, c := range []struct {
		name string
		ips  [][]string
	}{
		{"deleted", [][]string{{"link", "del", "vcap"}}},
		{"down then deleted", [][]string{{"link", "set", "vcap", "down"}, {"link", "del", "vcap"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const want = "capture on vcap: the interface was deleted (no such device)"
			ns := newVethNS(t)
			src := openInNS(t, ns, nil)
			w, err := NewWriter(WriterConfig{Path: filepath.Join(t.TempDir(), "gone.pcap"), LinkType: src.LinkType()})
			if err != nil {
				t.Fatal(err)
			}
			roce, _ := mixedTraffic(20, false)
			tx := ns.OpenTx(t)
			defer tx.Close()
			go func() {
				if _, err := tx.Send(roce, len(roce), 10_000); err != nil {
					t.Error(err)
				}
				// Until the ring's block timeout handed them over and a
				// periodic flush wrote them, however busy the machine is.
				if !testenv.Poll(0, func() bool { n, _ := w.Written(); return n >= uint64(len(roce)) }) {
					t.Errorf("the %d frames sent did not reach the file", len(roce))
				}
				for _, ip := range c.ips {
					if out, err := exec.Command("ip", append([]string{"-n", ns.Name}, ip...)...).CombinedOutput(); err != nil {
						t.Errorf("ip %v: %v: %s", ip, err, out)
					}
				}
			}()
			var rep Report
			var err2 error
			if err := ns.Do(t, func() error {
				rep, err2 = Run(context.Background(), src, w, RunOptions{})
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err2 == nil || err2.Error() != want || !errors.Is(err2, syscall.ENODEV) {
				t.Fatalf("Run ended with %v, want %q", err2, want)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs, _ := readAll(t, w.Files()[0])
			if len(recs) != len(roce) || rep.Written != uint64(len(roce)) {
				t.Errorf("%d frames in the file, %d written by the report; want the %d sent before", len(recs), rep.Written, len(roce))
			}
		})
	}
}

// An interface taken down and up again mid-capture does not end it: the
// socket stays bound to the interface, the capture says it went down and
// came back, and the frames sent before and after are all in the file.
func TestAFPacketInterfaceDownUp(t *testing.T) {
	ns := newVethNS(t)
	notices := make(chan string, 16)
	src := openInNS(t, ns, &Config{Notice: func(s string) { notices <- s }})
	w, err := NewWriter(WriterConfig{Path: filepath.Join(t.TempDir(), "downup.pcap"), LinkType: src.LinkType()})
	if err != nil {
		t.Fatal(err)
	}
	roce, _ := mixedTraffic(20, false)
	tx := ns.OpenTx(t)
	defer tx.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var said []string
	go func() {
		defer stop()
		written := func(n int) func() bool {
			return func() bool { m, _ := w.Written(); return m >= uint64(n) }
		}
		notice := func(want string) bool {
			select {
			case s := <-notices:
				said = append(said, s)
				return s == want
			case <-time.After(testenv.WaitDeadline):
				return false
			}
		}
		if _, err := tx.Send(roce, len(roce), 10_000); err != nil {
			t.Error(err)
			return
		}
		if !testenv.Poll(0, written(len(roce))) {
			t.Errorf("the %d frames sent first did not reach the file", len(roce))
			return
		}
		ip := func(args ...string) {
			if out, err := exec.Command("ip", append([]string{"-n", ns.Name}, args...)...).CombinedOutput(); err != nil {
				t.Errorf("ip %v: %v: %s", args, err, out)
			}
		}
		ip("link", "set", "vcap", "down")
		if !notice("capture on vcap: the interface went down; the capture waits for it to come back up") {
			t.Errorf("no notice that the interface went down; said %q", said)
			return
		}
		ip("link", "set", "vcap", "up")
		if !notice("capture on vcap: the interface is back up; capturing again") {
			t.Errorf("no notice that the interface came back up; said %q", said)
			return
		}
		if !testenv.Poll(0, ns.HasCarrier) {
			t.Error("the veth pair has no carrier after up")
			return
		}
		if _, err := tx.Send(roce, len(roce), 10_000); err != nil {
			t.Error(err)
			return
		}
		if !testenv.Poll(0, written(2*len(roce))) {
			n, _ := w.Written()
			t.Errorf("%d frames in the file, want the %d sent before down and the %d after up", n, len(roce), len(roce))
		}
	}()
	var rep Report
	var err2 error
	if err := ns.Do(t, func() error {
		rep, err2 = Run(ctx, src, w, RunOptions{})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err2 != nil {
		t.Fatalf("Run ended with %v, want it to go on until stopped", err2)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _ := readAll(t, w.Files()[0])
	if len(recs) != 2*len(roce) || rep.Written != uint64(2*len(roce)) {
		t.Errorf("%d frames in the file, %d written by the report; want the %d sent before down and after up", len(recs), rep.Written, 2*len(roce))
	}
	for i := range recs {
		if !bytes.Equal(recs[i], roce[i%len(roce)]) {
			t.Errorf("frame %d differs", i)
		}
	}
	if rep.LinkDowns != 1 || !strings.Contains(rep.String(), "the interface went down 1 time during") {
		t.Errorf("report counts %d link downs, want 1:\n%s", rep.LinkDowns, rep.String())
	}
}

// Each frame carries the direction the kernel saw it go (sll_pkttype):
// what arrives on the captured interface is inbound, what the host sends
// from it outbound, and pcapng's epb_flags say so.
func TestAFPacketDirection(t *testing.T) {
	ns := newVethNS(t)
	testenv.MustHaveTool(t, "tcpreplay")
	roce, _ := mixedTraffic(20, false)
	in := filepath.Join(t.TempDir(), "sent.pcap")
	writeTestPcap(t, in, roce)
	src := openInNS(t, ns, nil)
	ns.Replay(t, in) // vsend to vcap: inbound on vcap
	if out, err := ns.Command("tcpreplay", "-q", "-i", ns.Capture, "--pps=50000", in).CombinedOutput(); err != nil {
		t.Fatalf("tcpreplay on %s: %v\n%s", ns.Capture, err, out)
	}
	var got []decode.Direction
	for len(got) < 2*len(roce) {
		p, err := src.Next()
		if errors.Is(err, ErrTimeout) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Direction)
	}
	if len(got) != 2*len(roce) {
		t.Fatalf("captured %d frames, want %d", len(got), 2*len(roce))
	}
	for i, d := range got {
		want := decode.DirectionInbound
		if i >= len(roce) {
			want = decode.DirectionOutbound
		}
		if d != want {
			t.Errorf("frame %d: direction %d, want %d", i+1, d, want)
		}
	}
}
