package capfile

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// TestBundledRealCapture: the real SoftRoCE rping capture the repository
// holds (testdata/real, made by make vmtest) decodes whole, every frame
// RoCEv2 with a correct ICRC, and with the opcode tshark reads in each.
func TestBundledRealCapture(t *testing.T) {
	const path = "../testdata/real/softroce-rping.pcap"
	frames := readAll(t, path)
	if len(frames) != 245 {
		t.Fatalf("%s: %d frames, want 245", path, len(frames))
	}
	for _, f := range frames {
		if f.Err != nil || f.Transport != decode.TransportRoCEv2 || f.Has&decode.CRCsCheck == 0 || !f.ICRCOK {
			t.Errorf("%s: frame %d: %v %v, CRCs checked %v, ICRC ok %v: want RoCEv2 with a correct ICRC", path, f.Number, f.Err, f.Transport, f.Has&decode.CRCsCheck != 0, f.ICRCOK)
		}
	}
	tshark := testenv.MustHaveTool(t, "tshark")
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "infiniband.bth.opcode").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", path, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(frames) {
		t.Fatalf("tshark reads %d frames, we %d", len(lines), len(frames))
	}
	for i, l := range lines {
		op, err := strconv.Atoi(l)
		if err != nil || op != int(frames[i].BTH.OpCode) {
			t.Errorf("frame %d: opcode %d, tshark %q", i+1, frames[i].BTH.OpCode, l)
		}
	}
}
