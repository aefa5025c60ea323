package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pcapRecords returns the offset of each record of the little-endian pcap
// b (the header is the first 24 bytes) and its timestamp in ns.
func pcapRecords(t *testing.T, b []byte) (offs []int, tsNs []int64) {
	t.Helper()
	if binary.LittleEndian.Uint32(b) != 0xa1b23c4d {
		t.Fatal("want a little-endian nanosecond pcap")
	}
	for off := 24; off+16 <= len(b); off += 16 + int(binary.LittleEndian.Uint32(b[off+8:])) {
		offs = append(offs, off)
		tsNs = append(tsNs, int64(binary.LittleEndian.Uint32(b[off:]))*1e9+int64(binary.LittleEndian.Uint32(b[off+4:])))
	}
	return offs, tsNs
}

// TestInterruptStdinPipe: ibanalyze reads the first 50 packets of a
// capture from a pipe that stays open, as from `ibcap -w - |`, and is
// interrupted while it waits for more: it prints the totals of the 50
// packets (the report a file of those 50 gives), exit 0. The interval is
// set so that the 50th packet makes the one report so far, which tells the
// test the child has read it.
func TestInterruptStdinPipe(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "rocev2_rping.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	const written = 50
	offs, tsNs := pcapRecords(t, b)
	if len(offs) <= written || tsNs[written-2] >= tsNs[written-1] {
		t.Fatal("the capture no longer suits the test")
	}
	part := filepath.Join(t.TempDir(), "part.pcap")
	if err := os.WriteFile(part, b[:offs[written]], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, signal := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		args := []string{"flows", "--json", "--window", "1"}
		want := strings.ReplaceAll(runOK(t, append(args, part)...), part, "stdin")
		if !strings.Contains(want, `"packets": 50`) {
			t.Fatalf("the report on the first 50 packets:\n%s", want)
		}
		args = append(args, "--interval", strconv.FormatInt(tsNs[written-1]-tsNs[0], 10), "-")
		cmd := exec.Command(ibanalyzeBin, args...)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		stdin, stdout := startPiped(t, cmd)
		timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() }) // a hang fails the test, not the run
		if _, err := stdin.Write(b[:offs[written]]); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewReader(stdout)
		var soFar strings.Builder
		for !strings.Contains(soFar.String(), `"until_ns"`) {
			line, err := out.ReadString('\n')
			soFar.WriteString(line)
			if err != nil {
				t.Fatalf("no report so far: %v\n%s%s", err, soFar.String(), errOut.String())
			}
		}
		if err := cmd.Process.Signal(signal); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(out)
		err = cmd.Wait()
		timer.Stop()
		stdin.Close()
		if err != nil || !strings.HasSuffix(string(rest), want) || !strings.Contains(errOut.String(), "reading stopped") {
			t.Errorf("%v after 50 packets through a pipe: %v, stderr:\n%s\nthe last report:\n%.800s\nwant:\n%.800s", signal, err, errOut.String(), rest, want)
		}
	}
}

// TestInterruptTwice: a second signal ends ibanalyze at once, with status
// 128+signal, when the first could not end a read: that of a named FIFO
// whose writer sends nothing (only standard input is read through a pipe
// the first signal closes).
func TestInterruptTwice(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "capture.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	cmd := exec.Command(ibanalyzeBin, "flows", fifo)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	// Opening the writing end without waiting succeeds once the child has
	// opened the FIFO to read: it is then past setting up its signals.
	var w *os.File
	for {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w = f
			break
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer w.Close()
	line, rest, err := interruptTwice(t, cmd, stderr)
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("two SIGINTs while reading a silent FIFO: exit %d (%v), want 130; stderr:\n%s%s", code, err, line, rest)
	}
}

// interruptTwice sends cmd a SIGINT, waits for the "reading stopped" line
// on its stderr, sends the second once the first is taken (two sent
// together may merge into one), then waits for cmd to end; it returns the
// first line, the rest of stderr and Wait's error.
func interruptTwice(t *testing.T, cmd *exec.Cmd, stderr io.Reader) (line, rest string, err error) {
	t.Helper()
	errOut := bufio.NewReader(stderr)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	line, err = errOut.ReadString('\n')
	if err != nil || !strings.Contains(line, "reading stopped") {
		t.Fatalf("after the first SIGINT: %q, %v", line, err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(errOut)
	return line, string(b), cmd.Wait()
}
