package telemetry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ibscope/ibscope/telemetry"
)

// Read any telemetry file and turn counters into rates.
func Example() {
	series, err := telemetry.ReadFile("testdata/diag_format1.csv", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := series[0]
	col := s.Col("port_0_tx_bytes")
	for i := 1; i < s.Len(); i++ {
		rate, flags := s.Rate(i, col) // bytes/s, honouring wrap, clear-on-sample and gaps
		fmt.Printf("t=%d %.0f B/s %v lost=%d\n", s.TimeNs(i), rate, flags, s.LostBefore(i))
	}
	for _, w := range s.Warnings {
		fmt.Println("warning:", w)
	}
	// Output:
	// t=1700000000000200200 20010005 B/s ok lost=0
	// t=1700000000000400150 20005001 B/s gap lost=1
	// warning: testdata/diag_format1.csv:4: 1 sample(s) lost: sample_id jumps from 1 to 3
}

// ΔPortXmitWait over a window, as `ibanalyze tick` needs it, from perfquery
// text (sysfs samples and sidecars work the same way: the column is always
// telemetry.PortXmitWait).
func ExampleSeries_DeltaWithin() {
	series, _ := telemetry.ReadFile("testdata/perfquery.txt", nil)
	s := series[0]
	d, err := s.DeltaWithin(s.Col(telemetry.PortXmitWait), 1700000000e9, 1700000001e9)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d ticks in %.1f s (%v)\n", s.Source, d.Value, d.Seconds(), d.Flags)
	// Output:
	// lid:1/1: 5000 ticks in 1.0 s (ok)
}

// The capture side: sample sysfs counters into a sidecar next to a capture.
func ExampleNewSysfsSampler() {
	dir, _ := os.MkdirTemp("", "sidecar")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "out.pcap.telemetry.csv")
	f, _ := os.Create(path)
	sampler, err := telemetry.NewSysfsSampler("testdata/sysfs", "mlx5_0", 1, 10*time.Millisecond, f)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Millisecond)
	defer cancel()
	if err := sampler.Run(ctx); err != nil { // normally: go sampler.Run(ctx)
		fmt.Println(err)
	}
	f.Close()

	series, _ := telemetry.ReadFile(path, nil)
	s := series[0]
	fmt.Println(s.Source, s.Clock, s.Len() >= 3, s.Value(0, s.Col(telemetry.NpCNPSent)))
	// Output:
	// mlx5_0/1 host true 1200
}
