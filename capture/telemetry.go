package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/telemetry"
)

// TelemetrySuffix is appended to a capture file's name for its telemetry
// sidecar: out.pcap gets out.pcap.telemetry.csv.
const TelemetrySuffix = ".telemetry.csv"

// TelemetryPort finds the RDMA port whose counters describe device: the
// device itself ("mlx5_0", "mlx5_0:2"), or the RDMA port whose RoCE
// netdev device is ("eth2").
func TelemetryPort(device string, cfg *Config) (dev string, port int, err error) {
	c := cfg.withDefaults()
	devs, err := ListRDMADevices(c.SysfsRoot)
	if err != nil {
		return "", 0, err
	}
	if name, p, err := ParseRDMAName(device); err == nil {
		if d := findRDMA(devs, name); d != nil {
			sp, err := selectPort(*d, p)
			if err != nil {
				return "", 0, err
			}
			return d.Name, sp.Num, nil
		}
	}
	if dev, port, ok := portOfNetdev(devs, device); ok {
		return dev, port, nil
	}
	return "", 0, fmt.Errorf("%s is neither an RDMA device nor the netdev of one: telemetry samples an RDMA port's counters", device)
}

// TelemetrySysfs is the sysfs mount point the telemetry package takes for
// cfg (nil: the defaults): cfg's SysfsRoot lists the RDMA class directory,
// "/sys/class/infiniband", and telemetry wants "/sys".
func TelemetrySysfs(cfg *Config) string {
	c := cfg.withDefaults()
	return strings.TrimSuffix(filepath.Clean(c.SysfsRoot), filepath.Join("class", "infiniband"))
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

// StartTelemetry starts sampling dev/port every interval into path. The
// first sample is taken at once and the last one when Stop is called, so
// the samples bracket the capture.
func StartTelemetry(dev string, port int, interval time.Duration, path string, cfg *Config) (*Telemetry, error) {
	root := TelemetrySysfs(cfg)
	// Written as samples arrive, like the capture beside it.
	f, err := outfile.OpenStream(path)
	if err != nil {
		return nil, fmt.Errorf("telemetry sidecar: %w", err)
	}
	s, err := telemetry.NewSysfsSampler(root, dev, port, interval, f)
	if err != nil {
		f.Close()
		if fi, serr := os.Lstat(path); serr == nil && fi.Mode().IsRegular() {
			os.Remove(path)
		}
		return nil, fmt.Errorf("telemetry for %s port %d: %w", dev, port, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Telemetry{Path: path, file: f, sampler: s, cancel: cancel, done: make(chan error, 1)}
	go func() { t.done <- s.Run(ctx) }()
	return t, nil
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
