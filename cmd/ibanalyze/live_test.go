package main

import (
	"bufio"
	"encoding/binary"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDecodeLive: a capture arriving through a pipe whose writer stays
// open is shown frame by frame (issue 24: ibcap -w - -U | ibanalyze decode
// - printed nothing until the capture ended). The first frame's line is
// read before the writer is closed; then the rest follows.
func TestDecodeLive(t *testing.T) {
	b, err := os.ReadFile("../../testdata/pcaps/rocev2_ipv4.pcap")
	if err != nil {
		t.Fatal(err)
	}
	first := 24 + 16 + int(binary.LittleEndian.Uint32(b[24+8:])) // file header, one record
	for _, c := range []struct {
		name string
		args []string
	}{{"pipe", []string{"decode", "-"}}, {"pipe -l --json", []string{"decode", "-l", "--json", "-"}}} {
		cmd := exec.Command(ibanalyzeBin, c.args...)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
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
