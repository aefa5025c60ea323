package analyze

import (
	"bufio"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// A capture on every interface of a host records each frame crossing a
// veth pair twice, leaving one end and arriving at the other (issue 20:
// `-i any` on SoftRoCE's va/vb doubled every flow). tcpdump -i any in a
// namespace, while tcpreplay sends a go-back-N exchange (with its resends)
// out of one end: flows counts each frame once, the resends still as
// duplicates, and says how many second records it left out.
func TestFlowsAnyInterfaceCountsOnce(t *testing.T) {
	testenv.MustHaveTool(t, "tcpdump")
	testenv.MustHaveTool(t, "tcpreplay")
	ns := testnetns.New(t, nil, nil)
	g := testcap.GoBackN{Messages: 100, PacketsPerMsg: 4, Payload: 1024, PSN0: 5000, Src: 1, Dst: 2, QP: 0x11, AckQP: 0x12,
		InFlight: 8, GapNs: 1000, LostFirstTime: func(i int) bool { return i%97 == 13 }}
	pkts, truth := g.Packets(testcap.BaseNs)
	dir := t.TempDir()
	sent := testcap.WriteIn(t, dir, "sent.pcap", false, pkts)
	capture := filepath.Join(dir, "any.pcap")

	// Twice the frames: each leaves vsend and arrives at vcap.
	cmd := ns.Command("tcpdump", "-i", "any", "-U", "-n", "-c", fmt.Sprint(2*len(pkts)), "-w", capture, "udp port 4791")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	listening := false
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			listening = listening || strings.Contains(sc.Text(), "listening on")
			mu.Unlock()
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	testenv.WaitFor(t, 0, "tcpdump to listen", func() bool { mu.Lock(); defer mu.Unlock(); return listening })
	ns.Replay(t, sent, "--pps=20000")
	select {
	case err := <-done:
		if err != nil {
			mu.Lock()
			t.Fatalf("tcpdump: %v\n%s", err, log.String())
		}
	case <-time.After(testenv.WaitDeadline):
		cmd.Process.Kill()
		<-done
		mu.Lock()
		t.Fatalf("tcpdump did not see the %d records it waited for (vcap dropped %d)\n%s", 2*len(pkts), ns.RxDropped(t), log.String())
	}

	r, err := capfile.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	if lt := r.LinkType(); lt != 276 && lt != 113 { // LINKTYPE_LINUX_SLL2, LINKTYPE_LINUX_SLL
		t.Fatalf("tcpdump -i any wrote link type %d, not Linux cooked", lt)
	}
	r.Close()
	res := runFlowsFiles(t, capture)
	w := res.Flows[0]
	if res.Input.Frames != 2*len(pkts) || res.Input.SeenTwice != len(pkts) || res.Input.Packets != len(pkts) {
		t.Errorf("input %+v: want %d frames, %d seen twice, %d packets", res.Input, 2*len(pkts), len(pkts), len(pkts))
	}
	t.Logf("%d records, %d packets, %d seen twice; %d messages, %d lost, %d resent (%d duplicates)",
		res.Input.Frames, res.Input.Packets, res.Input.SeenTwice, w.Messages.Total, truth.Lost, truth.Resent, w.PSN.Duplicates)
	if w.Messages.Total != 100 || w.PSN.Duplicates != uint64(truth.Resent) || w.PSN.Gaps != uint64(truth.Lost) {
		t.Errorf("messages %+v, PSN %+v; want 100 messages, %d duplicates, %d gaps", w.Messages, w.PSN, truth.Resent, truth.Lost)
	}
}

// BenchmarkSeenTwice is the cost a record of a Linux cooked capture pays
// to be checked against the recent ones: "pairs", each frame sent then
// received (a veth pair); "unpaired", every frame only sent (a NIC), the
// whole window searched each time.
func BenchmarkSeenTwice(b *testing.B) {
	d := decode.Decoder{LinkType: decode.LinkTypeEthernet}
	frames := make([]decode.Frame, 4096)
	for i := range frames {
		p := testcap.Packet{TsNs: testcap.BaseNs + int64(i)*100, Src: 1, Dst: 2, QP: 0x11, PSN: uint32(i), Op: 0x0A, Payload: 64, DMALen: 64}
		if err := d.Decode(testcap.RoCEFrame(b, p), &frames[i]); err != nil {
			b.Fatal(err)
		}
		frames[i].TsNs = p.TsNs
	}
	for _, paired := range []bool{true, false} {
		b.Run(map[bool]string{true: "pairs", false: "unpaired"}[paired], func(b *testing.B) {
			s := seenTwice{seed: maphash.MakeSeed()}
			for i := 0; b.Loop(); i++ {
				f := &frames[(i/2)%len(frames)]
				f.Iface = linuxOutgoing
				if paired && i%2 == 1 {
					f.Iface = 0
				}
				if !paired {
					f = &frames[i%len(frames)]
					f.Iface = linuxOutgoing
				}
				s.again(f, 0, true)
			}
		})
	}
}
