package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// sysfsPort reads the counter files of one RDMA port:
// ROOT/class/infiniband/DEV/ports/PORT/{counters,hw_counters}/*.
type sysfsPort struct {
	src      Source
	paths    []string
	counters []Counter
	buf      []byte
}

// DefaultSysfs is where sysfs is mounted. Every sysfs root in ibscope
// (capture's, telemetry's, metrics') is such a mount point; "" means this.
const DefaultSysfs = "/sys"

// SysfsClassDir is where the RDMA devices are listed under the sysfs mount
// point root ("" means DefaultSysfs).
func SysfsClassDir(root string) string {
	if root == "" {
		root = DefaultSysfs
	}
	return filepath.Join(root, "class", "infiniband")
}

// SysfsPortDir is where the counters of dev/port live under the sysfs
// mount point root ("" means DefaultSysfs).
func SysfsPortDir(root, dev string, port int) string {
	return filepath.Join(SysfsClassDir(root), dev, "ports", strconv.Itoa(port))
}

// SoftRoCEParent names the netdev a software RoCE device (rdma_rxe) is
// bound to, from the "parent" attribute rdma_rxe alone gives its devices,
// under the sysfs mount point root; "" for any other device. (siw, iWARP
// and an RNIC node, is not RoCE and gets "".)
func SoftRoCEParent(root, dev string) string {
	dir := filepath.Join(SysfsClassDir(root), dev)
	parent, err := os.ReadFile(filepath.Join(dir, "parent"))
	if err != nil {
		return ""
	}
	if nt, _ := os.ReadFile(filepath.Join(dir, "node_type")); bytes.Contains(nt, []byte("RNIC")) {
		return ""
	}
	return string(bytes.TrimSpace(parent))
}

// openSysfsPort lists the counter files of dev/port and gives each its
// catalogue metadata. A software RoCE device (rdma_rxe) keeps every
// hw_counter as a 64-bit count in memory, so its hw_counters are 64-bit
// (a restart at 0, when the device is deleted and added again, is then a
// reset, not a wrap).
func openSysfsPort(root, dev string, port int) (*sysfsPort, error) {
	base := SysfsPortDir(root, dev, port)
	p := &sysfsPort{src: Source{Device: dev, Port: port}, buf: make([]byte, 64)}
	software := SoftRoCEParent(root, dev) != ""
	seen := map[string]bool{}
	found := 0
	for _, dir := range []string{"counters", "hw_counters"} {
		ents, err := os.ReadDir(filepath.Join(base, dir))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("telemetry: sysfs: %w", err)
		}
		found++
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			if !e.IsDir() {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			c := SysfsCounter(dir, n)
			if software && dir == "hw_counters" && c.Kind == KindCounter {
				c.Width = 64
			}
			if seen[c.Name] {
				c.Name = "hw_" + c.Name
			}
			seen[c.Name] = true
			p.paths = append(p.paths, filepath.Join(base, dir, n))
			p.counters = append(p.counters, c)
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("telemetry: sysfs: no counters or hw_counters directory under %s", base)
	}
	if len(p.counters) == 0 {
		return nil, fmt.Errorf("telemetry: sysfs: no counter files under %s", base)
	}
	return p, nil
}

// read fills values (and missing) from the files; the error joins one error
// per file that could not be read or parsed, each naming the file.
func (p *sysfsPort) read(values []uint64, missing []bool) error {
	var errs []error
	for j, path := range p.paths {
		v, err := p.readFile(path)
		if err != nil {
			errs = append(errs, err)
			values[j], missing[j] = 0, true
			continue
		}
		values[j], missing[j] = v, false
	}
	return errors.Join(errs...)
}

// widen gives 64 bits to every counter whose reading shows more than its
// catalogue width holds (widenTo64).
func (p *sysfsPort) widen(values []uint64, missing []bool) {
	for j := range p.counters {
		if !missing[j] {
			widenTo64(&p.counters[j], values[j])
		}
	}
}

func (p *sysfsPort) readFile(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("telemetry: sysfs: read %s: %w", path, unwrapPathErr(err))
	}
	n, err := io.ReadFull(f, p.buf)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("telemetry: sysfs: read %s: %w", path, unwrapPathErr(err))
	}
	b := trimSpace(p.buf[:n])
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = trimSpace(b[:len(b)-1])
	}
	v, ok := parseUint(b)
	if !ok {
		return 0, fmt.Errorf("telemetry: sysfs: read %s: %s is not an unsigned integer", path, quoted(b))
	}
	return v, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadSysfs reads one snapshot of every counter of dev/port under root (""
// means "/sys"; tests pass a sysfs-shaped tree): the files in
// ROOT/class/infiniband/DEV/ports/PORT/counters and .../hw_counters. The
// result is a one-sample series on the host clock whose StartNs and EndNs
// bracket the reads. A file that cannot be read does not stop the others: it
// is marked missing in the series and named in the returned error (the
// series is still returned).
func ReadSysfs(root, dev string, port int) (*Series, error) {
	p, err := openSysfsPort(root, dev, port)
	if err != nil {
		return nil, err
	}
	values := make([]uint64, len(p.counters))
	missing := make([]bool, len(p.counters))
	start := time.Now().UnixNano()
	rerr := p.read(values, missing)
	end := time.Now().UnixNano()
	p.widen(values, missing)
	s := NewSeries(p.src, ClockHost, p.counters)
	s.setMeta("format", "sysfs")
	s.Append(0, start, end, values)
	for j, m := range missing {
		if m {
			s.SetMissing(0, j)
		}
	}
	return s, rerr
}

// SysfsSampler reads a port's sysfs counters at a fixed interval and appends
// each sample to a sidecar (see SidecarWriter for the format). It is what
// `ibcap --telemetry INTERVAL` runs next to a capture:
//
//	f, _ := os.Create(pcapPath + ".telemetry.csv")
//	s, err := telemetry.NewSysfsSampler("", "mlx5_0", 1, time.Second, f)
//	if err != nil { ... }
//	go func() { done <- s.Run(ctx) }()
//
// Every sample is written with one Write call and flushed (if the writer has
// Flush), so a killed capture leaves a readable sidecar. A counter that
// cannot be read leaves its field empty in that sample (FlagMissing for the
// deltas across it) and sampling goes on: a device that goes away and comes
// back (driver reload, rdma link del and add) costs the samples taken while
// it was gone, counted apart in Failures.
type SysfsSampler struct {
	// OnError, if set before Run, receives each problem reading a counter
	// file (the error names the file); sampling goes on. The problems are
	// counted in Failures either way.
	OnError func(error)

	port     *sysfsPort
	base     string // the port's sysfs directory
	interval time.Duration
	out      io.Writer

	// wasGone is set when a sample found the port absent from sysfs, until
	// a sample reads it again: the device came back, its counters reset.
	wasGone bool

	mu       sync.Mutex
	failures SamplerFailures
	samples  uint64
}

// cameBack reports, once, that the last sample read counters of a port
// that an earlier one found absent: the device was created again (or its
// driver reloaded), and its counters started over.
func (s *SysfsSampler) cameBack() bool {
	if !s.wasGone {
		return false
	}
	if _, err := os.Stat(s.base); err != nil {
		return false
	}
	s.wasGone = false
	return true
}

// maxKeptErrors bounds the read errors a sampler keeps to show
// (SamplerFailures.First); the counts go on.
const maxKeptErrors = 10

// SamplerFailures counts what a sampler could not read. The counts are
// exact; only the errors kept to show are bounded.
type SamplerFailures struct {
	// Reads is every counter read that failed.
	Reads uint64
	// Samples is the samples with at least one counter unread (its field
	// empty in the sidecar).
	Samples uint64
	// GoneReads is those of Reads that failed because the counter file or
	// the whole port was not there: the device was being removed, or its
	// driver reloading. The other failures are files that would not read
	// or parse.
	GoneReads uint64
	// GoneSamples is those of Samples whose every failure was a gone one.
	GoneSamples uint64
	// First is the first failures, at most maxKeptErrors, each naming its
	// file.
	First []error
}

// NewSysfsSampler prepares a sampler of dev/port under root ("" means
// "/sys") every interval, writing to w. The set of counters is fixed here,
// from the files present now.
func NewSysfsSampler(root, dev string, port int, interval time.Duration, w io.Writer) (*SysfsSampler, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("telemetry: sysfs sampler: interval %v must be positive", interval)
	}
	if w == nil {
		return nil, errors.New("telemetry: sysfs sampler: nil writer")
	}
	p, err := openSysfsPort(root, dev, port)
	if err != nil {
		return nil, err
	}
	return &SysfsSampler{port: p, base: SysfsPortDir(root, dev, port), interval: interval, out: w}, nil
}

// Samples is how many samples have been written so far.
func (s *SysfsSampler) Samples() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// Failures returns what could not be read so far.
func (s *SysfsSampler) Failures() SamplerFailures {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.failures
	f.First = append([]error(nil), f.First...)
	return f
}

// Run writes the sidecar header, takes a sample at once and then every
// interval, and a last one when ctx is cancelled, so the samples bracket the
// capture. The first sample is read before the header is written: a
// counter whose value there is wider than its catalogue width is declared
// 64-bit. It returns nil after ctx is cancelled, or the first write error.
func (s *SysfsSampler) Run(ctx context.Context) error {
	values := make([]uint64, len(s.port.counters))
	missing := make([]bool, len(s.port.counters))
	start, end := s.read(values, missing)
	s.port.widen(values, missing)
	meta := map[string]string{"interval_ns": strconv.FormatInt(s.interval.Nanoseconds(), 10)}
	sw, err := NewSidecarWriter(s.out, s.port.src, ClockHost, s.port.counters, meta)
	if err != nil {
		return err
	}
	var id uint64
	write := func() error {
		if s.cameBack() {
			sw.Reset()
		}
		var m []bool
		for _, x := range missing {
			if x {
				m = missing
				break
			}
		}
		if err := sw.Write(id, start, end, values, m); err != nil {
			return err
		}
		id++
		s.mu.Lock()
		s.samples = id
		s.mu.Unlock()
		return nil
	}
	if err := write(); err != nil {
		return err
	}
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			start, end = s.read(values, missing)
			return write()
		case <-t.C:
			start, end = s.read(values, missing)
			if err := write(); err != nil {
				return err
			}
		}
	}
}

// read takes one sample into values and missing, accounts for what could
// not be read, and returns when the reads began and ended.
func (s *SysfsSampler) read(values []uint64, missing []bool) (startNs, endNs int64) {
	startNs = time.Now().UnixNano()
	rerr := s.port.read(values, missing)
	endNs = time.Now().UnixNano()
	if rerr == nil {
		return startNs, endNs
	}
	var list []error
	if j, ok := rerr.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{rerr}
	}
	// A port directory that is not there is a device that went away: its
	// files vanished with it. While the kernel removes a device, the
	// counter files may go before the directory: a file that is not there
	// (or whose device is) is gone too.
	_, serr := os.Stat(s.base)
	portGone := errors.Is(serr, os.ErrNotExist)
	if portGone {
		s.wasGone = true
	}
	var gone uint64
	for _, e := range list {
		if portGone || errors.Is(e, os.ErrNotExist) || errors.Is(e, syscall.ENODEV) || errors.Is(e, syscall.ENXIO) {
			gone++
		}
	}
	s.mu.Lock()
	s.failures.Reads += uint64(len(list))
	s.failures.GoneReads += gone
	s.failures.Samples++
	if gone == uint64(len(list)) {
		s.failures.GoneSamples++
	}
	for _, e := range list {
		if len(s.failures.First) < maxKeptErrors {
			s.failures.First = append(s.failures.First, e)
		}
	}
	s.mu.Unlock()
	if s.OnError != nil {
		for _, e := range list {
			s.OnError(e)
		}
	}
	return startNs, endNs
}
