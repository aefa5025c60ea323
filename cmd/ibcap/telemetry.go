package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/capture"
)

func addTelemetryFlag(fl *pflag.FlagSet, f *flags) {
	fl.DurationVar(&f.telemetry, "telemetry", 0, "sample the RDMA port's sysfs counters every INTERVAL (e.g. 100ms) into FILE"+capture.TelemetrySuffix)
}

// startTelemetry starts the sidecar sampler when --telemetry asks for it;
// the returned func stops it and says what it wrote.
func startTelemetry(f *flags) (func() error, error) {
	if f.telemetry == 0 {
		return func() error { return nil }, nil
	}
	if f.telemetry < 0 {
		return nil, errors.New("--telemetry: the interval must be positive")
	}
	if f.file == "-" {
		return nil, errors.New("--telemetry writes a sidecar next to the capture file: give -w FILE, not -w -")
	}
	dev, port, err := capture.TelemetryPort(f.device, nil)
	if err != nil {
		return nil, err
	}
	t, err := capture.StartTelemetry(dev, port, f.telemetry, f.file+capture.TelemetrySuffix, nil)
	if err != nil {
		return nil, err
	}
	return func() error {
		n, err := t.Stop()
		if !f.quiet {
			fmt.Fprintf(os.Stderr, "%d telemetry samples of %s port %d in %s\n", n, dev, port, t.Path)
		}
		return err
	}, nil
}
