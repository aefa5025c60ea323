// Package fakeverbs is test support for the verbs sniffer: it builds the
// libibverbs test double (c/fakeverbs.c, a C shared library compiled with
// gcc against the real <infiniband/verbs.h>, so its structures are
// rdma-core's), writes a fake /sys/class/infiniband tree and the double's
// configuration, and gives the environment ibcap or capture.Open runs with
// (IBSCOPE_LIBIBVERBS, IBSCOPE_SYSFS). The product needs no C: only the
// tests build the double.
//
// The double's behaviour, its configuration keys and the timestamps it
// gives (the "truth" tests compare with) are described at the top of
// c/fakeverbs.c.
package fakeverbs

import (
	"bufio"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

//go:embed c/fakeverbs.c c/libibverbs.map
var source embed.FS

// Port is a port of a fake device, as sysfs shows it.
type Port struct {
	Num       int
	LinkLayer string // "InfiniBand" or "Ethernet"
	State     string // sysfs words, e.g. "4: ACTIVE"
	PhysState string // e.g. "5: LinkUp"
	Rate      string // e.g. "100 Gb/sec (4X EDR)"
	LID       uint16
	Netdev    string   // a RoCE port's netdev (gid_attrs/ndevs/0)
	GIDs      []string // gids/0, gids/1, ...
	// OutOfBuffer is hw_counters/out_of_buffer at the start; NoDropCounter
	// leaves the file out, as on devices without it.
	OutOfBuffer   uint64
	NoDropCounter bool
}

// Device is a fake RDMA device: in sysfs, and listed by the double unless
// NotInLibrary (a device whose provider is missing).
type Device struct {
	Name         string
	Ports        []Port
	NotInLibrary bool
}

// DefaultDevices are fake_0, an InfiniBand port, and fake_1, a RoCE port
// whose netdev is fakeeth1.
func DefaultDevices() []Device {
	return []Device{
		{Name: "fake_0", Ports: []Port{{Num: 1, LinkLayer: "InfiniBand", State: "4: ACTIVE", PhysState: "5: LinkUp",
			Rate: "100 Gb/sec (4X EDR)", LID: 0x1a, GIDs: []string{"fe80:0000:0000:0000:0002:c903:0000:1a01"}, OutOfBuffer: 1000}}},
		{Name: "fake_1", Ports: []Port{{Num: 1, LinkLayer: "Ethernet", State: "4: ACTIVE", PhysState: "5: LinkUp",
			Rate: "25 Gb/sec (1X EDR)", Netdev: "fakeeth1",
			GIDs: []string{"fe80:0000:0000:0000:0202:c9ff:fe00:0101", "0000:0000:0000:0000:0000:ffff:c0a8:0701"}}}},
	}
}

// Config is what the double presents and does. Zero values take the
// double's defaults (1 GHz clock, 48-bit timestamps, no wall clock).
type Config struct {
	Devices     []Device // nil: DefaultDevices
	Feed        string   // pcap whose frames the sniffer QP receives
	FeedLoops   int      // deliver the feed this many times (0: once; -1: forever)
	Pace        bool     // deliver each frame at its time (feed start + its offset), not at once
	ClockKHz    uint64   // hca_core_clock
	MaskBits    int      // completion_timestamp_mask width
	ClockOrigin uint64   // device clock at ibv_open_device
	Wallclock   bool     // CQs may carry wall-clock ns
	MaxQPWR     int      // receive requests per QP
	// MissingSymbol builds the double without this exported function
	// (e.g. "ibv_wc_status_str"), as an older or broken libibverbs.
	MissingSymbol string
	// Faults are configuration lines as c/fakeverbs.c documents them:
	// "burst_at 10 300", "error_at 5 1", "flush_at 7", "fatal_at 9",
	// "fail create_qp 1", "no_op create_flow".
	Faults []string
}

// Env is a configured double: its library, sysfs tree, configuration and log.
type Env struct {
	Lib        string // the double, named libibverbs.so.1
	Sysfs      string // the fake sysfs mount point: devices are under its class/infiniband
	ConfigPath string
	LogPath    string
	pidConfig  string
}

var (
	buildMu sync.Mutex
	builds  = map[string]string{} // the library built without a symbol ("" none), by that symbol
)

// Library builds the double once per process (and reuses a build of the
// same source from an earlier run) and returns its path. It skips the test
// when gcc or the verbs headers are missing, and fails under CI=true.
func Library(t testing.TB) string {
	t.Helper()
	return library(t, "")
}

// library is Library without the exported function omit ("" for none):
// the version script makes it local, as in a library too old to have it.
func library(t testing.TB, omit string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if lib, ok := builds[omit]; ok {
		return lib
	}
	lib, skipWhy, err := build(omit)
	if skipWhy != "" {
		testenv.SkipOrFail(t, "fakeverbs: %s (make deps installs gcc and libibverbs-dev)", skipWhy)
	}
	if err != nil {
		t.Fatal(err)
	}
	builds[omit] = lib
	return lib
}

func build(omit string) (lib, skipWhy string, err error) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return "", "needs gcc to build the libibverbs test double", nil
	}
	if _, err := os.Stat("/usr/include/infiniband/verbs.h"); err != nil {
		return "", "needs <infiniband/verbs.h> (libibverbs-dev) to build the libibverbs test double", nil
	}
	csrc, _ := source.ReadFile("c/fakeverbs.c")
	vmap, _ := source.ReadFile("c/libibverbs.map")
	if omit != "" {
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(omit) + `;`)
		if !re.Match(vmap) {
			return "", "", fmt.Errorf("fakeverbs: the double exports no %s to leave out", omit)
		}
		vmap = re.ReplaceAll(vmap, nil)
	}
	h := sha256.New()
	h.Write(csrc)
	h.Write(vmap)
	if hdr, err := os.ReadFile("/usr/include/infiniband/verbs.h"); err == nil {
		h.Write(hdr)
	}
	dir := filepath.Join(os.TempDir(), "ibscope-fakeverbs-"+hex.EncodeToString(h.Sum(nil))[:16])
	lib = filepath.Join(dir, "libibverbs.so.1")
	if _, err := os.Stat(lib); err == nil {
		return lib, "", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("fakeverbs: %w", err)
	}
	// Built under a temporary name and renamed: test binaries of several
	// packages may build it at once.
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", "", fmt.Errorf("fakeverbs: %w", err)
	}
	defer os.RemoveAll(work)
	for name, b := range map[string][]byte{"fakeverbs.c": csrc, "libibverbs.map": vmap} {
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			return "", "", fmt.Errorf("fakeverbs: %w", err)
		}
	}
	out := filepath.Join(work, "libibverbs.so.1")
	cmd := exec.Command(gcc, "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", out,
		"-Wl,-soname,libibverbs.so.1", "-Wl,--version-script="+filepath.Join(work, "libibverbs.map"),
		filepath.Join(work, "fakeverbs.c"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("fakeverbs: build the libibverbs test double: %v\n%s", err, msg)
	}
	if err := os.Rename(out, lib); err != nil {
		return "", "", fmt.Errorf("fakeverbs: %w", err)
	}
	return lib, "", nil
}

// New builds the double, writes the sysfs tree and the configuration in a
// directory of the test's own, and returns the Env. The configuration is
// also written where the double looks in this process when
// FAKEVERBS_CONFIG is not set ($TMPDIR/fakeverbs-PID.conf), for capture.Open
// in the test's own process: such tests must not run in parallel.
func New(t testing.TB, cfg Config) *Env {
	t.Helper()
	lib := library(t, cfg.MissingSymbol)
	dir := t.TempDir()
	e := &Env{
		Lib:        lib,
		Sysfs:      filepath.Join(dir, "sys"),
		ConfigPath: filepath.Join(dir, "fakeverbs.conf"),
		LogPath:    filepath.Join(dir, "fakeverbs.log"),
		pidConfig:  filepath.Join(os.TempDir(), fmt.Sprintf("fakeverbs-%d.conf", os.Getpid())),
	}
	devs := cfg.Devices
	if devs == nil {
		devs = DefaultDevices()
	}
	var conf strings.Builder
	class := filepath.Join(e.Sysfs, "class", "infiniband")
	fmt.Fprintf(&conf, "log %s\nsysfs %s\n", e.LogPath, class)
	for _, d := range devs {
		writeDevice(t, class, d)
		if !d.NotInLibrary {
			fmt.Fprintf(&conf, "device %s %d\n", d.Name, len(d.Ports))
		}
	}
	if cfg.Feed != "" {
		fmt.Fprintf(&conf, "feed %s\n", cfg.Feed)
	}
	loops := cfg.FeedLoops
	if loops < 0 {
		loops = 0
	} else if loops == 0 {
		loops = 1
	}
	fmt.Fprintf(&conf, "feed_loops %d\n", loops)
	if cfg.ClockKHz != 0 {
		fmt.Fprintf(&conf, "hca_clock_khz %d\n", cfg.ClockKHz)
	}
	if cfg.MaskBits != 0 {
		fmt.Fprintf(&conf, "ts_mask_bits %d\n", cfg.MaskBits)
	}
	fmt.Fprintf(&conf, "clock_origin %d\n", cfg.ClockOrigin)
	if cfg.Wallclock {
		conf.WriteString("wallclock 1\n")
	}
	if cfg.Pace {
		conf.WriteString("pace 1\n")
	}
	if cfg.MaxQPWR != 0 {
		fmt.Fprintf(&conf, "max_qp_wr %d\n", cfg.MaxQPWR)
	}
	for _, f := range cfg.Faults {
		conf.WriteString(f + "\n")
	}
	for _, p := range []string{e.ConfigPath, e.pidConfig} {
		if err := os.WriteFile(p, []byte(conf.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Remove(e.pidConfig) })
	return e
}

func writeDevice(t testing.TB, root string, d Device) {
	t.Helper()
	write := func(rel, content string) {
		p := filepath.Join(root, d.Name, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("node_type", "1: CA")
	write("fw_ver", "0.0.0")
	write("hca_type", "fakeverbs")
	for _, p := range d.Ports {
		pd := filepath.Join("ports", strconv.Itoa(p.Num))
		write(filepath.Join(pd, "link_layer"), p.LinkLayer)
		write(filepath.Join(pd, "state"), p.State)
		write(filepath.Join(pd, "phys_state"), p.PhysState)
		write(filepath.Join(pd, "rate"), p.Rate)
		write(filepath.Join(pd, "lid"), fmt.Sprintf("0x%x", p.LID))
		write(filepath.Join(pd, "sm_lid"), "0x1")
		for i, g := range p.GIDs {
			write(filepath.Join(pd, "gids", strconv.Itoa(i)), g)
			if p.LinkLayer == "Ethernet" {
				write(filepath.Join(pd, "gid_attrs", "ndevs", strconv.Itoa(i)), p.Netdev)
				write(filepath.Join(pd, "gid_attrs", "types", strconv.Itoa(i)), []string{"IB/RoCE v1", "RoCE v2"}[i%2])
			}
		}
		for name, v := range map[string]uint64{"port_rcv_data": 1000, "port_xmit_data": 2000, "port_rcv_packets": 10,
			"port_xmit_packets": 20, "port_xmit_wait": 7, "symbol_error": 0, "port_rcv_errors": 0} {
			write(filepath.Join(pd, "counters", name), strconv.FormatUint(v, 10))
		}
		write(filepath.Join(pd, "hw_counters", "rx_write_requests"), "0")
		if !p.NoDropCounter {
			write(filepath.Join(pd, "hw_counters", "out_of_buffer"), strconv.FormatUint(p.OutOfBuffer, 10))
		}
	}
}

// Environ is os.Environ with the double and the sysfs tree in place, for a
// child process (ibcap): the configuration is named by FAKEVERBS_CONFIG,
// and LD_LIBRARY_PATH also puts the double first for a build linked with
// libibverbs.
func (e *Env) Environ() []string {
	return append(os.Environ(), e.Vars()...)
}

// Vars are the variables Environ adds.
func (e *Env) Vars() []string {
	ld := filepath.Dir(e.Lib)
	if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
		ld += ":" + old
	}
	return []string{"IBSCOPE_LIBIBVERBS=" + e.Lib, "IBSCOPE_SYSFS=" + e.Sysfs,
		"FAKEVERBS_CONFIG=" + e.ConfigPath, "LD_LIBRARY_PATH=" + ld}
}

// Setenv sets IBSCOPE_LIBIBVERBS and IBSCOPE_SYSFS for the test, for
// capture.Open in the test's own process.
func (e *Env) Setenv(t testing.TB) {
	t.Setenv("IBSCOPE_LIBIBVERBS", e.Lib)
	t.Setenv("IBSCOPE_SYSFS", e.Sysfs)
}

// Log is what the double logged.
type Log struct {
	Violations  []string // contract violations of the caller
	Faults      []string // faults injected
	Drops       []int    // feed indexes of the frames dropped for want of a buffer
	FeedStartNs int64    // when the sniffer flow started the feed (0 if it did not)
	Listings    int      // ibv_get_device_list calls: 0 when the double was not loaded
	OpenNs      int64    // when the last device was opened: the clock's t_open
	Opens       int      // devices opened
	Closes      int      // devices closed
	Lines       []string
}

// ReadLog reads the double's log.
func (e *Env) ReadLog(t testing.TB) Log {
	t.Helper()
	var l Log
	f, err := os.Open(e.LogPath)
	if os.IsNotExist(err) {
		return l
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		l.Lines = append(l.Lines, line)
		word, rest, _ := strings.Cut(line, " ")
		switch word {
		case "violation:":
			l.Violations = append(l.Violations, rest)
		case "fault:":
			l.Faults = append(l.Faults, rest)
		case "drop":
			n, _ := strconv.Atoi(rest)
			l.Drops = append(l.Drops, n)
		case "feed_start_ns":
			v, _, _ := strings.Cut(rest, " ")
			l.FeedStartNs, _ = strconv.ParseInt(v, 10, 64)
		case "list":
			l.Listings++
		case "open":
			l.Opens++
			if _, v, ok := strings.Cut(rest, " open_ns "); ok {
				l.OpenNs, _ = strconv.ParseInt(v, 10, 64)
			}
		case "close":
			l.Closes++
		}
	}
	return l
}

// RequireLoaded stops the test when the process the test ran did not load
// the double (a verbs backend that ignores IBSCOPE_LIBIBVERBS): it skips,
// or fails under CI=true.
func (e *Env) RequireLoaded(t testing.TB) {
	t.Helper()
	if e.ReadLog(t).Listings > 0 {
		return
	}
	why := "the verbs backend did not load the libibverbs test double (does it honour IBSCOPE_LIBIBVERBS?)"
	testenv.SkipOrFail(t, "%s", why)
}

// NoViolations fails the test for each contract violation the double logged.
func (e *Env) NoViolations(t testing.TB) {
	t.Helper()
	for _, v := range e.ReadLog(t).Violations {
		t.Errorf("libibverbs contract violated: %s", v)
	}
}

// A CaptureFault is a fault of the double injected while a capture runs,
// and what the capture must do with it.
type CaptureFault struct {
	Fault  string // the Config.Faults entry
	Before int    // frames of the feed delivered before it
	Says   string // the words of the error that ends the capture
}

// CaptureFaults are the faults that end a capture, for the capture
// package's tests and ibcap's alike, so that both hold the same words.
var CaptureFaults = []CaptureFault{
	{"error_at 5 1", 5, "a receive completion failed with: local length error"},
	{"flush_at 7", 7, "the receive queue went to the error state (the device or its port failed)"},
	{"fatal_at 9", 9, "poll completions: no such device"},
}
