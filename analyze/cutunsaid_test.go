package analyze

import (
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/protostate"
)

// A capture tool that cut frames at 243 bytes and recorded 243 as their
// original length too (issue 21: 489 of 509 RoCE frames refused, "UDP
// length 4136 runs past the 209-byte frame"): each frame is decoded as far
// as its headers go, as tshark does, and marked cut (its length on the wire
// what its headers say, no ICRC check); flows counts every packet and
// message, and the bytes the wire carried.
func TestCutUnsaidFrames(t *testing.T) {
	g := testcap.GoBackN{Messages: 20, PacketsPerMsg: 4, Payload: 4096, PSN0: 100, Src: 1, Dst: 2, QP: 0x11, AckQP: 0x12, GapNs: 1000}
	pkts, _ := g.Packets(testcap.BaseNs)
	const snap = 243
	var frames []testcap.Frame
	var wireBytes uint64
	whole := map[int]int{} // frame number -> its length before the cut
	for i, p := range pkts {
		b := testcap.RoCEFrame(t, p)
		whole[i+1] = len(b)
		wireBytes += uint64(len(b) + 24)
		frames = append(frames, testcap.Frame{TsNs: p.TsNs, B: b[:min(len(b), snap)]}) // recorded as snap bytes long
	}
	path := testcap.WriteFrames(t, "cut243.pcap", frames)

	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var decoded []decode.Frame
	for {
		var f decode.Frame
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the cut capture: %v", err)
		}
		decoded = append(decoded, f)
	}
	r.Close()
	for _, f := range decoded {
		cut := whole[f.Number] > snap
		if f.Has&decode.HasBTH == 0 || f.Truncated() != cut || f.WireLen != whole[f.Number] || (cut && f.Has&decode.CRCsCheck != 0) {
			t.Errorf("frame %d: BTH %v, cut %v (want %v), wire length %d (want %d), CRC checked %v", f.Number, f.Has&decode.HasBTH != 0,
				f.Truncated(), cut, f.WireLen, whole[f.Number], f.Has&decode.CRCsCheck != 0)
		}
	}
	checkCutAgainstTshark(t, path, decoded)

	res := runFlowsFiles(t, path)
	w := res.Flows[0]
	if res.Input.DecodeErrors != 0 || res.Input.Packets != len(pkts) || w.Messages != (Messages{First: 20, Middle: 40, Last: 20, Total: 20}) ||
		w.ICRCBad != 0 || w.PSN != (protostate.PSNStats{}) {
		t.Errorf("input %+v, messages %+v, PSN %+v, icrc_bad %d", res.Input, w.Messages, w.PSN, w.ICRCBad)
	}
	if got := w.WireBytes + res.Flows[1].WireBytes; got != wireBytes {
		t.Errorf("wire bytes %d, the frames before the cut %d", got, wireBytes)
	}
}

// checkCutAgainstTshark compares opcode, PSN and RETH DMA length of every
// frame with tshark's reading of the cut file.
func checkCutAgainstTshark(t *testing.T, path string, decoded []decode.Frame) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		if testenv.InCI() {
			t.Fatal("tshark not installed, and CI must compare the cut frames with it: make deps installs it")
		}
		t.Log("tshark not installed: cut frames not compared with it")
		return
	}
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn",
		"-e", "infiniband.reth.dmalen").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(decoded) {
		t.Fatalf("tshark read %d frames, we %d", len(lines), len(decoded))
	}
	for i, l := range lines {
		f := &decoded[i]
		want := []string{strconv.Itoa(int(f.BTH.OpCode)), strconv.Itoa(int(f.BTH.PSN)), ""}
		if f.Has&decode.HasRETH != 0 {
			want[2] = strconv.Itoa(int(f.RETH.DMALen))
		}
		if got := strings.Split(l, "\t"); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("frame %d: tshark %q, we %q", i+1, got, want)
		}
	}
}
