package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/capture"
)

func TestStatusLine(t *testing.T) {
	var b bytes.Buffer
	s := newStatusLine(&b, true)
	s.update(capture.Report{Written: 1000, Bytes: 128_000, Filtered: 3, Stats: capture.Stats{KernelDrops: 2}, Elapsed: time.Second})
	s.update(capture.Report{Written: 3000, Bytes: 384_000, Filtered: 5, Stats: capture.Stats{KernelDrops: 2, DeviceDrops: 1}, Elapsed: 2 * time.Second})
	line := b.String()[strings.LastIndex(b.String(), "\r"):]
	for _, want := range []string{"3000 packets", "375 KiB", "2000 pkt/s", "2.05 Mb/s", "5 filtered", "3 dropped"} {
		if !strings.Contains(line, want) {
			t.Errorf("status line %q lacks %q", line, want)
		}
	}
	// After a kernel filter, a filtered count of 0 would be false: left out.
	s.update(capture.Report{Written: 4000, Bytes: 512_000, Stats: capture.Stats{KernelFilter: true}, Elapsed: 3 * time.Second})
	if line := b.String()[strings.LastIndex(b.String(), "\r"):]; strings.Contains(line, "filtered") {
		t.Errorf("status line %q says a filtered count the kernel filter does not give", line)
	}
	s.clear()
	if !strings.HasSuffix(b.String(), "\r\x1b[K") {
		t.Error("clear did not erase the line")
	}
	var off bytes.Buffer
	q := newStatusLine(&off, false)
	q.update(capture.Report{Written: 1, Elapsed: time.Second})
	q.clear()
	if off.Len() != 0 {
		t.Errorf("status line off (quiet or not a terminal) wrote %q", off.String())
	}
}

// A notice (the interface went down) erases the status line and takes a
// line of its own; the next update draws the status line below it.
func TestStatusLineNote(t *testing.T) {
	var b bytes.Buffer
	s := newStatusLine(&b, true)
	s.update(capture.Report{Written: 10, Elapsed: time.Second})
	s.note("ibcap: capture on va: the interface went down; the capture waits for it to come back up")
	s.update(capture.Report{Written: 20, Elapsed: 2 * time.Second})
	got := b.String()
	note := "\r\x1b[Kibcap: capture on va: the interface went down; the capture waits for it to come back up\n"
	if i := strings.Index(got, note); i < 0 || !strings.HasPrefix(got[i+len(note):], "\r\x1b[K20 packets") {
		t.Errorf("status output %q: want the line erased, the note on its own line, then the status line", got)
	}
	// With no status line drawn (quiet, or not a terminal) the note is the line alone.
	var plain bytes.Buffer
	newStatusLine(&plain, false).note("ibcap: x")
	if plain.String() != "ibcap: x\n" {
		t.Errorf("note without a status line wrote %q", plain.String())
	}
}
