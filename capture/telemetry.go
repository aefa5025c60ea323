package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/telemetry"
)

// TelemetrySuffix is appended to a capture file's name for its telemetry
// sidecar: out.pcap gets out.pcap.telemetry.csv.
const TelemetrySuffix = ".telemetry.csv"

// CheckTelemetry says whether the target has an RDMA port whose counters
// describe its traffic (the device itself, or the RDMA port of its RoCE
// netdev): nil when it has, otherwise why telemetry cannot sample it.
func (t Target) CheckTelemetry() error {
	if t.HasRDMAPort() {
		return nil
	}
	return fmt.Errorf("%s is neither an RDMA device nor the netdev of one: telemetry samples an RDMA port's counters", t.Name)
}

// Telemetry samples an RDMA port's sysfs counters into a sidecar file
// while a capture runs, on the host clock, so the correlate analyses can
// line the counters up with the packets.
type Telemetry struct {
	Path    string // the sidecar file
	device  string
	port    int
	file    *os.File
	sampler *telemetry.SysfsSampler
	cancel  context.CancelFunc
	done    chan error
}

// StartTelemetry starts sampling the RDMA port of t every interval into
// path. The first sample is taken at once and the last one when Stop is
// called, so the samples bracket the capture.
func StartTelemetry(t Target, interval time.Duration, path string) (*Telemetry, error) {
	if err := t.CheckTelemetry(); err != nil {
		return nil, err
	}
	dev, port := t.Device.Name, t.Port.Num
	// Written as samples arrive, like the capture beside it.
	f, err := outfile.OpenStream(path)
	if err != nil {
		return nil, fmt.Errorf("telemetry sidecar: %w", err)
	}
	s, err := telemetry.NewSysfsSampler(t.Sysfs, dev, port, interval, f)
	if err != nil {
		f.Close()
		if fi, serr := os.Lstat(path); serr == nil && fi.Mode().IsRegular() {
			os.Remove(path)
		}
		return nil, fmt.Errorf("telemetry for %s port %d: %w", dev, port, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tel := &Telemetry{Path: path, device: dev, port: port, file: f, sampler: s, cancel: cancel, done: make(chan error, 1)}
	go func() { tel.done <- s.Run(ctx) }()
	return tel, nil
}

// TelemetryReport says what a sampler left in its sidecar.
type TelemetryReport struct {
	Path     string // the sidecar
	Device   string // the RDMA device sampled
	Port     int
	Samples  uint64 // samples written
	Failures telemetry.SamplerFailures
}

// Warning says, in one line, what the sidecar lacks: the counter reads that
// failed (their fields are empty) and how many were of a device that was
// gone; "" when nothing failed.
func (r TelemetryReport) Warning() string {
	f := r.Failures
	if f.Reads == 0 {
		return ""
	}
	w := fmt.Sprintf("telemetry: %d counter reads failed in %d of %d samples of %s port %d", f.Reads, f.Samples, r.Samples, r.Device, r.Port)
	switch {
	case f.GoneReads == f.Reads:
		w += ", all while the device or its counters were absent from sysfs (device removed or driver reloading)"
	case f.GoneReads > 0:
		w += fmt.Sprintf(" (%d of them while the device or its counters were absent from sysfs: device removed or driver reloading)", f.GoneReads)
	}
	w += "; their fields are empty in " + r.Path
	if len(f.First) > 0 && f.GoneReads < f.Reads {
		w += fmt.Sprintf("; first: %v", f.First[0])
	}
	return w
}

// Stop takes the last sample, closes the sidecar and says what it holds.
// A device that went away and came back costs only its samples (see
// TelemetryReport.Warning); the error is a sidecar that could not be
// written, or counter files that would not read while they were there.
func (t *Telemetry) Stop() (TelemetryReport, error) {
	t.cancel()
	runErr := <-t.done
	closeErr := t.file.Close()
	r := TelemetryReport{Path: t.Path, Device: t.device, Port: t.port, Samples: t.sampler.Samples(), Failures: t.sampler.Failures()}
	var readErr error
	if f := r.Failures; f.Reads > f.GoneReads {
		readErr = fmt.Errorf("telemetry: %d counter reads failed with the device present, first: %w", f.Reads-f.GoneReads, firstPresentError(f.First))
	}
	return r, errors.Join(runErr, closeErr, readErr)
}

// firstPresentError is the first kept failure that is not of a file that
// was gone, or the first one.
func firstPresentError(errs []error) error {
	for _, e := range errs {
		if !errors.Is(e, os.ErrNotExist) {
			return e
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return errors.New("no error kept")
}
