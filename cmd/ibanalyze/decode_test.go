package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeJSONRealCaptures(t *testing.T) {
	cases := []struct {
		file           string
		frames, icrcOK int
		vcrcOK         int
		transport      string
	}{
		{"softroce-demo_infiniband.pcap", 43, 43, 43, "ib"},
		{"oferby-proxy_roce.pcap", 105, 105, 0, "rocev2"},
		{"cx4lx_cnp.pcap", 1, 1, 0, "rocev2"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			out, stderr, code := run(t, "decode", "--json", sharedPcap(t, c.file))
			if code != 0 {
				t.Fatalf("exit %d, stderr: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != c.frames {
				t.Fatalf("%d JSON lines, want %d", len(lines), c.frames)
			}
			icrc, vcrc := 0, 0
			for i, l := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("line %d: %v: %s", i+1, err, l)
				}
				if m["transport"] != c.transport {
					t.Errorf("line %d: transport %v, want %s", i+1, m["transport"], c.transport)
				}
				for _, k := range []string{"frame", "ts_ns", "len", "opcode", "opcode_name", "dest_qp", "psn", "pkey"} {
					if _, ok := m[k]; !ok {
						t.Errorf("line %d: no %q key", i+1, k)
					}
				}
				if m["icrc_ok"] == true {
					icrc++
				}
				if m["vcrc_ok"] == true {
					vcrc++
				}
			}
			if icrc != c.icrcOK || vcrc != c.vcrcOK {
				t.Errorf("icrc_ok %d vcrc_ok %d, want %d and %d", icrc, vcrc, c.icrcOK, c.vcrcOK)
			}
		})
	}
}

func TestDecodeCNP(t *testing.T) {
	out, _, code := run(t, "decode", "--json", sharedPcap(t, "cx4lx_cnp.pcap"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m struct {
		OpcodeName string `json:"opcode_name"`
		DestQP     int    `json:"dest_qp"`
		BECN       bool   `json:"becn"`
		ECN        int    `json:"ecn"`
		Src, Dst   string
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.OpcodeName != "CNP" || m.DestQP != 280 || !m.BECN || m.Src != "10.0.17.1" || m.Dst != "10.0.18.1" {
		t.Errorf("CNP decoded as %+v", m)
	}
}

func TestDecodeSummaryLines(t *testing.T) {
	out, _, code := run(t, "decode", "-c", "20", sharedPcap(t, "oferby-proxy_roce.pcap"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "RC_SEND_LAST_WITH_IMMEDIATE qp 0x000045 psn 1") || !strings.Contains(out, "icrc ok") {
		t.Errorf("summary lines lack the expected frame:\n%s", out)
	}
}

func TestDecodeBadInput(t *testing.T) {
	dir := t.TempDir()
	notPcap := filepath.Join(dir, "notes.txt")
	os.WriteFile(notPcap, []byte("this is not a capture file\n"), 0o644)
	real, err := os.ReadFile(sharedPcap(t, "oferby-proxy_roce.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	os.WriteFile(cut, real[:len(real)-30], 0o644)
	empty := filepath.Join(dir, "empty.pcap")
	os.WriteFile(empty, nil, 0o644)

	_, stderr, code := run(t, "decode", notPcap)
	if code == 0 || !strings.Contains(stderr, notPcap) || !strings.Contains(stderr, "not a pcap or pcapng file") {
		t.Errorf("not a capture: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, "decode", empty)
	if code == 0 || !strings.Contains(stderr, empty) {
		t.Errorf("empty file: exit %d, stderr %q", code, stderr)
	}
	out, stderr, code := run(t, "decode", "--json", cut, sharedPcap(t, "cx4lx_cnp.pcap"))
	if code == 0 || !strings.Contains(stderr, "frame 123") || !strings.Contains(stderr, "byte offset") {
		t.Errorf("cut file: exit %d, stderr %q", code, stderr)
	}
	// Everything before the cut record, and the next file, were still decoded.
	if n := strings.Count(out, "\n"); n != 104+1 {
		t.Errorf("%d frames printed around a damaged file, want 105", n)
	}
}
