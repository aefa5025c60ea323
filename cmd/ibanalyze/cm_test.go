package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCMCommand runs ibanalyze cm on the generated rdma_cm session: the
// text names each connection's state and reject reason, and --json holds
// the same connections with the contract's keys.
func TestCMCommand(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_cm.pcap")
	out, _, _ := run(t, "cm", path)
	for _, want := range []string{"4 connections: 1 established, 2 rejected, 1 never completed", "192.168.7.1:50000", "disconnected",
		"rejected CONSUMER_DEFINED (28)", "incomplete", "0x000011/16777208", "0x000022/1000"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = run(t, "cm", "--json", path)
	var r struct {
		Input       map[string]any   `json:"input"`
		Messages    map[string]int   `json:"messages"`
		Established int              `json:"established"`
		Connections []map[string]any `json:"connections"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(r.Connections) != 4 || r.Established != 1 || r.Messages["REQ"] != 4 || r.Input["frames"] != float64(26) {
		t.Errorf("JSON: %d connections, %d established, messages %v, input %v", len(r.Connections), r.Established, r.Messages, r.Input)
	}
	for _, k := range []string{"transport", "active", "passive", "active_comm_id", "passive_comm_id", "service_id", "active_qpn",
		"active_psn", "passive_qpn", "passive_psn", "req_ns", "rep_ns", "rtu_ns", "req_to_rep_ns", "rep_to_rtu_ns", "reqs", "mras",
		"path_changes", "dreq_ns", "drep_ns", "state", "first_ns", "last_ns", "active_ip", "active_port", "passive_ip", "passive_port"} {
		if _, ok := r.Connections[0][k]; !ok {
			t.Errorf("connection 1 has no %q: %v", k, r.Connections[0])
		}
	}
}
