package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/internal/units"
)

func addTelemetryFlag(fl *pflag.FlagSet, f *flags) {
	fl.Var((*units.DurationNs)(&f.telemetry), "telemetry", "sample the RDMA port's sysfs counters every INTERVAL (e.g. 100ms) into FILE"+capture.TelemetrySuffix)
}

// telemetryTarget checks --telemetry against the capture's target, whose
// RDMA port it samples; nil without --telemetry.
func telemetryTarget(f *flags, t capture.Target) (*capture.Target, error) {
	if f.telemetry == 0 {
		return nil, nil
	}
	if f.telemetry < 0 {
		return nil, errors.New("--telemetry: the interval must be positive")
	}
	if f.file == "-" {
		return nil, errors.New("--telemetry writes a sidecar next to the capture file: give -w FILE, not -w -")
	}
	if err := t.CheckTelemetry(); err != nil {
		return nil, fmt.Errorf("--telemetry: %w", err)
	}
	return &t, nil
}

// startTelemetry starts the sidecar sampler on tel (none when nil); the
// returned func stops it and says what it wrote.
func startTelemetry(f *flags, tel *capture.Target) (func() error, error) {
	if tel == nil {
		return func() error { return nil }, nil
	}
	t, err := capture.StartTelemetry(*tel, f.telemetry, f.file+capture.TelemetrySuffix)
	if err != nil {
		return nil, err
	}
	return func() error {
		r, err := t.Stop()
		if !f.quiet {
			fmt.Fprintf(os.Stderr, "%d telemetry samples of %s port %d in %s\n", r.Samples, r.Device, r.Port, r.Path)
		}
		// A device that went away and came back is normal operation: its
		// missing samples are said, not an error of the capture.
		if w := r.Warning(); w != "" && !f.quiet {
			fmt.Fprintln(os.Stderr, "ibcap: warning: "+w)
		}
		return err
	}, nil
}
