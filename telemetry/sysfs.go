package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
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

func openSysfsPort(root, dev string, port int) (*sysfsPort, error) {
	base := SysfsPortDir(root, dev, port)
	p := &sysfsPort{src: Source{Device: dev, Port: port}, buf: make([]byte, 64)}
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
	s := NewSeries(p.src, ClockHost, p.counters)
	s.setMeta("format", "sysfs")
	values := make([]uint64, len(p.counters))
	missing := make([]bool, len(p.counters))
	start := time.Now().UnixNano()
	rerr := p.read(values, missing)
	end := time.Now().UnixNano()
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
// Flush), so a killed capture leaves a readable sidecar.
type SysfsSampler struct {
	// OnError, if set before Run, receives each problem reading a counter
	// file (the error names the file); sampling goes on. When nil, the
	// problems are kept for Errors.
	OnError func(error)

	port     *sysfsPort
	interval time.Duration
	out      io.Writer

	mu      sync.Mutex
	errs    []error
	samples uint64
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
	return &SysfsSampler{port: p, interval: interval, out: w}, nil
}

// Samples is how many samples have been written so far.
func (s *SysfsSampler) Samples() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// Errors returns the counter-read problems kept so far (at most 100) when
// OnError is nil.
func (s *SysfsSampler) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// Run writes the sidecar header, takes a sample at once and then every
// interval, and a last one when ctx is cancelled, so the samples bracket the
// capture. It returns nil after ctx is cancelled, or the first write error.
func (s *SysfsSampler) Run(ctx context.Context) error {
	meta := map[string]string{"interval_ns": strconv.FormatInt(s.interval.Nanoseconds(), 10)}
	sw, err := NewSidecarWriter(s.out, s.port.src, ClockHost, s.port.counters, meta)
	if err != nil {
		return err
	}
	values := make([]uint64, len(s.port.counters))
	missing := make([]bool, len(s.port.counters))
	var id uint64
	sample := func() error {
		start := time.Now().UnixNano()
		rerr := s.port.read(values, missing)
		end := time.Now().UnixNano()
		if rerr != nil {
			s.report(rerr)
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
	if err := sample(); err != nil {
		return err
	}
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return sample()
		case <-t.C:
			if err := sample(); err != nil {
				return err
			}
		}
	}
}

func (s *SysfsSampler) report(err error) {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	for _, e := range list {
		if s.OnError != nil {
			s.OnError(e)
			continue
		}
		s.mu.Lock()
		if len(s.errs) < 100 {
			s.errs = append(s.errs, e)
		}
		s.mu.Unlock()
	}
}
