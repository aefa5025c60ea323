package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// lockedBuffer is a strings.Builder a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLiveCapturePipe: ibcap -i vcap -w - -U piped into ibanalyze, as one
// watches a capture (issue 24 item 3): decode - prints a frame sent across
// a veth pair while ibcap still runs, and flows --interval 100ms - gives
// the report on the first 100 ms once a packet past them is captured, four
// packets in all, not when the capture ends (with the reorder window of 64
// packets it gave every report at the end).
func TestLiveCapturePipe(t *testing.T) {
	testenv.MustHaveTool(t, "tcpreplay")
	ns := testnetns.New(t, nil, nil)
	ibcap := filepath.Join(t.TempDir(), "ibcap")
	if out, err := exec.Command("go", "build", "-o", ibcap, "../ibcap").CombinedOutput(); err != nil {
		t.Fatalf("build ibcap: %v\n%s", err, out)
	}
	os.Chmod(filepath.Dir(ibcap), 0o755)
	pcap, err := filepath.Abs("../../testdata/pcaps/rocev2_ipv4.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		send []string // tcpreplay's pace and count
		want string   // a line that shows the capture so far
	}{
		{"decode", []string{"decode", "-"}, []string{"--pps=10", "--limit=1"}, "RC_SEND_FIRST"},
		{"flows --interval", []string{"flows", "--json", "--interval", "100ms", "-"}, []string{"--pps=5", "--limit=4"}, `"until_ns"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var capErr, anaErr lockedBuffer
			capture := ns.Command(ibcap, "-i", ns.Capture, "-w", "-", "-U")
			capture.Stdout, capture.Stderr = w, &capErr
			ana := exec.Command(ibanalyzeBin, c.args...)
			ana.Stdin, ana.Stderr = r, &anaErr
			out, err := ana.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := capture.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { capture.Process.Kill(); capture.Wait() })
			if err := ana.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ana.Process.Kill(); ana.Wait() })
			w.Close() // the pipe's ends are the processes' now
			r.Close()
			lines := make(chan string, 1024)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			testenv.WaitFor(t, time.Minute, "ibcap to start capturing", func() bool { return strings.Contains(capErr.String(), "capturing on") })
			ns.Replay(t, pcap, c.send...)
			// ibcap still runs: what ibanalyze prints now it printed live.
			deadline := time.After(time.Minute)
		wait:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("ibanalyze %s ended while ibcap ran: %s", strings.Join(c.args, " "), anaErr.String())
					}
					if strings.Contains(l, c.want) {
						break wait
					}
				case <-deadline:
					t.Fatalf("ibanalyze %s printed no %s within a minute of the packets, ibcap running (ibcap: %s; ibanalyze: %s)",
						strings.Join(c.args, " "), c.want, capErr.String(), anaErr.String())
				}
			}
			capture.Process.Signal(os.Interrupt)
			if err := capture.Wait(); err != nil {
				t.Errorf("ibcap: %v\n%s", err, capErr.String())
			}
			for range lines { // the rest, up to the end of its input
			}
			if err := ana.Wait(); err != nil {
				t.Errorf("ibanalyze %s: %v\n%s", strings.Join(c.args, " "), err, anaErr.String())
			}
		})
	}
}
