package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestFlowsPeak: a flow's peak is over 100 packets, never above the link
// rate the capture records, and the same with and without --interval
// (issue 24: 42.8 Gb/s on a 40 GbE link; a final peak with --interval
// lower than an earlier report's).
func TestFlowsPeak(t *testing.T) {
	r := filepath.Join(simPreset(t, "incast-small-roce"), "r.pcapng")
	type doc struct {
		UntilNs     int64   `json:"until_ns"`
		PeakPackets int     `json:"peak_packets"`
		LinkGbps    float64 `json:"link_gbps"`
		Flows       []struct {
			Packets  uint64  `json:"packets"`
			MeanGbps float64 `json:"mean_gbps"`
			PeakGbps float64 `json:"peak_gbps"`
		} `json:"flows"`
	}
	docs := func(args ...string) []doc {
		out := runOK(t, append([]string{"flows", "--json"}, args...)...)
		var ds []doc
		dec := json.NewDecoder(bytes.NewReader([]byte(out)))
		for dec.More() {
			var d doc
			if err := dec.Decode(&d); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, d)
		}
		return ds
	}
	whole := docs(r)[0]
	if whole.PeakPackets != 100 || whole.LinkGbps != 40 || len(whole.Flows) != 4 {
		t.Fatalf("peak_packets %d, link_gbps %v, %d flows", whole.PeakPackets, whole.LinkGbps, len(whole.Flows))
	}
	// The two senders' flows reach the receiver at the line rate while
	// the other is idle: their peak is the link's, and no more.
	for _, f := range whole.Flows[:2] {
		if f.PeakGbps != 40 {
			t.Errorf("peak %v Gb/s, want the link's 40", f.PeakGbps)
		}
	}
	// Uncapped (a rate far above), the windows' own figure is within the
	// timestamps' nanosecond rounding of 40.
	for _, f := range docs("--rate", "1000", r)[0].Flows[:2] {
		if f.PeakGbps < 39.99 || f.PeakGbps > 40.01 {
			t.Errorf("uncapped peak %v Gb/s", f.PeakGbps)
		}
	}
	soFar := docs("--interval", "100us", r)
	if len(soFar) < 10 {
		t.Fatalf("%d reports with --interval 100us", len(soFar))
	}
	last := soFar[len(soFar)-1]
	for i, f := range whole.Flows {
		if last.Flows[i].PeakGbps != f.PeakGbps {
			t.Errorf("flow %d: peak %v with --interval, %v without", i, last.Flows[i].PeakGbps, f.PeakGbps)
		}
		// The final windows tile every packet: no mean is above its peak.
		if f.MeanGbps > f.PeakGbps {
			t.Errorf("flow %d: mean %v Gb/s above its peak %v", i, f.MeanGbps, f.PeakGbps)
		}
	}
	for _, d := range soFar[:len(soFar)-1] {
		for i, f := range d.Flows {
			if f.PeakGbps > 40 || (f.Packets >= 200 && f.PeakGbps > last.Flows[i].PeakGbps) {
				t.Errorf("report until %d: flow %d peak %v above the final %v", d.UntilNs, i, f.PeakGbps, last.Flows[i].PeakGbps)
			}
		}
	}
}
