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
	tel := &Telemetry{Path: path, file: f, sampler: s, cancel: cancel, done: make(chan error, 1)}
	go func() { tel.done <- s.Run(ctx) }()
	return tel, nil
}

// Stop takes the last sample, closes the sidecar and returns how many
// samples it holds. Counter files that could not be read are reported in
// the error, after the sampling went on without them.
func (t *Telemetry) Stop() (samples uint64, err error) {
	t.cancel()
	runErr := <-t.done
	closeErr := t.file.Close()
	var readErr error
	if errs := t.sampler.Errors(); len(errs) > 0 {
		readErr = fmt.Errorf("telemetry: %d counter reads failed, first: %w", len(errs), errs[0])
	}
	return t.sampler.Samples(), errors.Join(runErr, closeErr, readErr)
}
