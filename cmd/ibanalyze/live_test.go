package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testcap"
)

// startPiped starts cmd with pipes to its standard input and from its
// standard output, for a test that writes a capture to it piece by piece.
func startPiped(t *testing.T, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

// TestDecodeLive: a capture arriving through a pipe whose writer stays
// open is shown frame by frame (issue 24: ibcap -w - -U | ibanalyze decode
// - printed nothing until the capture ended). The first frame's line is
// read before the writer is closed; then the rest follows.
func TestDecodeLive(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pcaps/rocev2_ipv4.pcap")
	if err != nil {
		t.Fatal(err)
	}
	offs, _ := pcapRecords(t, b)
	first := offs[1] // the file header and the first record
	for _, c := range []struct {
		name string
		args []string
	}{{"pipe", []string{"decode", "-"}}, {"pipe -l --json", []string{"decode", "-l", "--json", "-"}}} {
		cmd := exec.Command(ibanalyzeBin, c.args...)
		in, out := startPiped(t, cmd)
		if _, err := in.Write(b[:first]); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1)
		rd := bufio.NewReader(out)
		go func() {
			l, _ := rd.ReadString('\n')
			lines <- l
		}()
		select {
		case l := <-lines:
			if !strings.Contains(l, "RC_SEND_FIRST") && !strings.Contains(l, `"opcode_name":"RC_SEND_FIRST"`) {
				t.Errorf("%s: first line %q", c.name, l)
			}
		case <-time.After(60 * time.Second): // generous: only a decode that waits for the end takes this long
			t.Errorf("%s: no line within 60 s of the first frame while the writer is open", c.name)
		}
		in.Write(b[first:])
		in.Close()
		rest, _ := rd.ReadString(0)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if n := strings.Count(rest, "\n"); n < 2 {
			t.Errorf("%s: %d more lines after the writer closed:\n%s", c.name, n, rest)
		}
	}
}

// TestIntervalLive: with --interval on a pipe whose writer stays open, the
// reports so far come as their intervals close, not a reorder window of
// packets later (issue 24: a live view). 150 packets 1 us apart are
// written: the 101st closes the first interval of 100 us, and 49 more are
// fewer than the live reorder window of 64 (a capture at 15 packets a
// second gave its reports only at its end).
func TestIntervalLive(t *testing.T) {
	path := testcap.Write(t, "live.pcap", false, testcap.Stream(2000, 1, 2, 0x11, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 }))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	offs, _ := pcapRecords(t, b)
	cut := offs[150]
	cmd := exec.Command(ibanalyzeBin, "flows", "--json", "--interval", "100us", "-")
	in, out := startPiped(t, cmd)
	if _, err := in.Write(b[:cut]); err != nil {
		t.Fatal(err)
	}
	docs, drained := make(chan string, 1), make(chan struct{})
	go func() { // the first document, then the rest read away: a full pipe would stop the command
		defer close(drained)
		dec := json.NewDecoder(out)
		var m map[string]any
		u := ""
		if dec.Decode(&m) == nil {
			if v, ok := m["until_ns"]; ok {
				u = fmt.Sprint(v)
			}
		}
		docs <- u
		io.Copy(io.Discard, io.MultiReader(dec.Buffered(), out))
	}()
	select {
	case u := <-docs:
		if u == "" {
			t.Error("the first document is no report so far")
		}
	case <-time.After(60 * time.Second):
		t.Error("no report so far within 60 s of the packet that closes the first interval, the writer open")
	}
	in.Write(b[cut:])
	in.Close()
	<-drained
	if err := cmd.Wait(); err != nil {
		t.Error(err)
	}
}
