package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/fakeverbs"
)

// Wireshark on an InfiniBand port through ibcap's extcap entry, with the
// libibverbs double for the device: tshark -D lists the device with its
// link type, tshark -L gives ERF, and tshark -i ibcap-fake_0 captures
// every packet fed, byte for byte, in ERF records with the device's
// timestamps.
func TestExtcapVerbsTshark(t *testing.T) {
	v := newVerbsCase(t, 100, 200, true, fakeverbs.Config{})
	ext := extcapFolder(t)
	list := tsharkCommand(t, nil, ext, "-D")
	list.Env = v.env.Environ()
	out, err := list.CombinedOutput()
	if want := ". ibcap-fake_0 (ibcap: fake_0, port 1 InfiniBand in ERF records (verbs sniffer))\n"; err != nil || !strings.Contains(string(out), want) {
		t.Errorf("tshark -D: %v; want %q in:\n%s", err, want, out)
	}
	lts := tsharkCommand(t, nil, ext, "-L", "-i", "ibcap-fake_0")
	lts.Env = v.env.Environ()
	if out, err := lts.CombinedOutput(); err != nil || !strings.Contains(string(out), "ERF") {
		t.Errorf("tshark -L -i ibcap-fake_0: %v\n%s", err, out)
	}

	file := filepath.Join(t.TempDir(), "ib.pcapng")
	// The port as Wireshark's dialog passes it once chosen (--port 1):
	// ibcap joins it to the device once, not twice.
	capt := tsharkCommand(t, nil, ext, "-i", "ibcap-fake_0", "-o", "extcap.ibcap_fake_0.port:1", "-c", strconv.Itoa(len(v.want)), "-w", file)
	capt.Env = v.env.Environ()
	var said strings.Builder
	capt.Stdout, capt.Stderr = &said, &said
	if err := capt.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- capt.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tshark -i ibcap-fake_0: %v\n%s", err, said.String())
		}
	case <-time.After(2 * time.Minute):
		capt.Process.Kill()
		t.Fatalf("tshark -i ibcap-fake_0 -c %d did not stop:\n%s", len(v.want), said.String())
	}
	v.check(t, file, 0, nil)
	if n := tsharkCount(t, file); n != len(v.want) {
		t.Errorf("tshark reads %d frames of its capture, %d were fed", n, len(v.want))
	}
	t.Logf("%d InfiniBand packets fed, %d captured through tshark -i ibcap-fake_0", len(v.want), tsharkCount(t, file))
}
