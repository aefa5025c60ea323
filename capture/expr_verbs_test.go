package capture

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testenv"
)

// On a verbs port, which has no kernel filter, the expression's program
// runs in user space on each frame as it was on the wire: it keeps what
// tcpdump -r keeps from the same frames with the same expression.
func TestVerbsFilterExprKeepsWhatTcpdumpKeeps(t *testing.T) {
	testenv.MustHaveTool(t, "tcpdump")
	requireLibpcap(t)
	_, frames := mixedTraffic(300, true)
	dir := t.TempDir()
	feed := filepath.Join(dir, "feed.pcap")
	writeTestPcap(t, feed, frames)
	for _, expr := range []string{"vlan and udp port 4791", "not udp", "ip6 or arp"} {
		kept := filepath.Join(t.TempDir(), "kept.pcap")
		if out, err := exec.Command("tcpdump", "-r", feed, "-w", kept, expr).CombinedOutput(); err != nil {
			t.Fatalf("tcpdump -r %s: %v\n%s", expr, err, out)
		}
		want, _ := readAll(t, kept)
		env := fakeverbs.New(t, fakeverbs.Config{Feed: feed})
		src, got := captureFake(t, env, "fake_1", Config{FilterExpr: expr})
		st, _ := src.Stats()
		src.Close()
		if len(want) == 0 || len(want) == len(frames) || len(got) != len(want) {
			t.Fatalf("%s: kept %d of %d frames, tcpdump %d", expr, len(got), len(frames), len(want))
		}
		for i := range want {
			if string(got[i].Data) != string(want[i]) {
				t.Fatalf("%s: frame %d differs from tcpdump's", expr, i)
			}
		}
		if st.NotRoCE != uint64(len(frames)-len(want)) {
			t.Errorf("%s: %d frames counted as filtered out in user space, want %d", expr, st.NotRoCE, len(frames)-len(want))
		}
	}
}
