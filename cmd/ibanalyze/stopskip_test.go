package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// unusableFrames is a nanosecond pcap header and a chunk of records of
// frames no command can use: IPv4 frames that are not RoCE.
func unusableFrames(t *testing.T) (header, chunk []byte) {
	t.Helper()
	enc, err := capfile.NewEncoder(capfile.EncoderConfig{LinkType: decode.LinkTypeEthernet, SnapLenBytes: 65535})
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 60)
	frame[12], frame[14] = 0x08, 0x45 // IPv4, not UDP 4791
	for i := range 1000 {
		if chunk, err = enc.AppendPacket(chunk, &capfile.Packet{Data: frame, TsNs: 1_700_000_000_000_000_000 + int64(i)*1000}); err != nil {
			t.Fatal(err)
		}
	}
	return enc.AppendHeader(nil), chunk
}

// TestInterruptDuringUnusableFrames: one SIGINT ends every command that
// reads packets while it skips an endless run of frames it cannot use,
// written into a FIFO (a file no signal closes): the commands that report
// on what they read stop reading (before, the stream skipped such frames
// inside, never looking at the stop flag, and `flows` ran 630 s past
// SIGINT), the others exit at once. A command still running a minute
// after the signal fails the test.
func TestInterruptDuringUnusableFrames(t *testing.T) {
	dir := simIncast(t)
	tel, good := filepath.Join(dir, "perfquery.txt"), filepath.Join(dir, "r.pcap")
	header, chunk := unusableFrames(t)
	for _, c := range []struct {
		name string
		args []string // FIFO stands for the FIFO's path
	}{
		{"decode", []string{"decode", "FIFO"}},
		{"flows", []string{"flows", "FIFO"}},
		{"ipd", []string{"ipd", "FIFO"}},
		{"credits", []string{"credits", "FIFO"}},
		{"credits --rate", []string{"credits", "--rate", "QDR", "FIFO"}},
		{"buffer", []string{"buffer", "FIFO", good}},
		{"tick", []string{"tick", "FIFO", "--telemetry", tel}},
		{"pfc", []string{"pfc", "FIFO"}},
		{"hops", []string{"hops", "FIFO"}},
		{"export", []string{"export", "FIFO", "-o", "OUT.parquet"}},
		{"correlate", []string{"correlate", "FIFO", "--telemetry", tel, "-o", "OUT.parquet"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			fifo := filepath.Join(tmp, "capture.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				testenv.SkipOrFail(t, "mkfifo: %v", err)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.NewReplacer("FIFO", fifo, "OUT", filepath.Join(tmp, "out")).Replace(a)
			}
			cmd := exec.Command(ibanalyzeBin, args...)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			killed := false
			defer func() {
				if !killed {
					cmd.Process.Kill()
				}
			}()
			// The FIFO opens for writing once the command opened it to read.
			var w *os.File
			testenv.WaitFor(t, 0, c.name+" opening the FIFO", func() bool {
				f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
				if err != nil && !errors.Is(err, syscall.ENXIO) {
					t.Fatal(err)
				}
				w = f
				return err == nil
			})
			defer w.Close()
			if err := syscall.SetNonblock(int(w.Fd()), false); err != nil {
				t.Fatal(err)
			}
			var written atomic.Int64
			go func() {
				if _, err := w.Write(header); err != nil {
					return
				}
				for { // until the command closes its end (EPIPE)
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
			// Well into the run: the FIFO holds 64 KiB, the rest was read.
			testenv.WaitFor(t, 0, c.name+" reading 8 MB of frames", func() bool { return written.Load() >= 8<<20 })
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(testenv.WaitDeadline):
				cmd.Process.Kill()
				killed = true
				t.Fatalf("%s still running %v after one SIGINT, %d MB read; stderr:\n%s", c.name, testenv.WaitDeadline, written.Load()>>20, errOut.String())
			}
			msg := errOut.String()
			if !strings.Contains(msg, "interrupt: ") || strings.Contains(msg, "goroutine ") {
				t.Errorf("%s after SIGINT: exit %d, stderr:\n%s", c.name, cmd.ProcessState.ExitCode(), msg)
			}
		})
	}
}
