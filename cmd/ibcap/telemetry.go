package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/capture"
)

// addTelemetryFlag is where --telemetry will go once the telemetry
// package's sysfs sampler lands.
func addTelemetryFlag(*pflag.FlagSet, *flags) {}

// startTelemetry starts nothing yet; the returned func stops it.
func startTelemetry(context.Context, *flags, capture.Source) (func() error, error) {
	return func() error { return nil }, nil
}
