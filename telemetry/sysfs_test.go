package telemetry

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testenv"
)

func TestReadSysfsFixture(t *testing.T) {
	s, err := ReadSysfs("testdata/sysfs", "mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1 || s.Clock != ClockHost || s.Source != (Source{"mlx5_0", 1}) {
		t.Fatalf("len %d clock %v source %v", s.Len(), s.Clock, s.Source)
	}
	if len(s.Counters) != 21+14 {
		t.Errorf("%d counters", len(s.Counters))
	}
	for name, want := range map[string]uint64{PortXmitData: 4000000000, PortXmitWait: 123456, NpCNPSent: 1200,
		RpCNPHandled: 1100, NpECNMarkedRoCEPackets: 1300, OutOfSequence: 7, PacketSeqErr: 3, "lifespan": 10} {
		col := s.Col(name)
		if col < 0 || s.Value(0, col) != want {
			t.Errorf("%s: col %d", name, col)
			continue
		}
	}
	if c := s.Counters[s.Col(PortXmitData)]; c.Unit != UnitWords {
		t.Errorf("port_xmit_data unit %v", c.Unit)
	}
	if c := s.Counters[s.Col(PortXmitWait)]; c.Unit != UnitTicks {
		t.Errorf("port_xmit_wait unit %v", c.Unit)
	}
	if c := s.Counters[s.Col("lifespan")]; c.Kind != KindGauge {
		t.Errorf("lifespan kind %v", c.Kind)
	}
	if s.EndNs[0] < s.StartNs[0] || s.StartNs[0] < time.Now().Add(-time.Minute).UnixNano() {
		t.Errorf("times %d %d", s.StartNs[0], s.EndNs[0])
	}
	if _, err := ReadSysfs("testdata/sysfs", "mlx5_9", 1); err == nil || !strings.Contains(err.Error(), "mlx5_9") {
		t.Errorf("missing device: %v", err)
	}
}

// writeTree makes a sysfs-shaped tree under dir.
func writeTree(t *testing.T, dir string, counters, hw map[string]string) {
	t.Helper()
	base := SysfsPortDir(dir, "mlx5_2", 1)
	for sub, m := range map[string]map[string]string{"counters": counters, "hw_counters": hw} {
		if err := os.MkdirAll(filepath.Join(base, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		for k, v := range m {
			writeFileAtomic(t, filepath.Join(base, sub, k), v)
		}
	}
}

// writeFileAtomic replaces a file by rename, as a counter changes under a
// reader without ever showing a half-written value.
func writeFileAtomic(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestReadSysfsUnreadable(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{PortXmitData: "100", PortXmitWait: "garbage"}, map[string]string{NpCNPSent: "5"})
	base := SysfsPortDir(dir, "mlx5_2", 1)
	if err := os.Symlink(filepath.Join(base, "nowhere"), filepath.Join(base, "hw_counters", "out_of_buffer")); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSysfs(dir, "mlx5_2", 1)
	if s == nil || err == nil {
		t.Fatalf("want a series and an error, got %v %v", s, err)
	}
	msg := err.Error()
	for _, want := range []string{filepath.Join(base, "counters", PortXmitWait), `"garbage"`, filepath.Join(base, "hw_counters", "out_of_buffer")} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if s.Value(0, s.Col(PortXmitData)) != 100 || s.Value(0, s.Col(NpCNPSent)) != 5 {
		t.Errorf("readable counters not read")
	}
	if s.Valid(0, s.Col(PortXmitWait)) || s.Valid(0, s.Col(OutOfBuffer)) || !s.Valid(0, s.Col(PortXmitData)) {
		t.Errorf("missing marks wrong")
	}
	empty := t.TempDir()
	os.MkdirAll(filepath.Join(SysfsPortDir(empty, "mlx5_2", 1), "counters"), 0o755)
	if _, err := ReadSysfs(empty, "mlx5_2", 1); err == nil {
		t.Errorf("empty counters dir should fail")
	}
}

// syncBuffer is a bytes.Buffer safe to read while the sampler writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestSysfsSampler(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{PortXmitData: "0", PortXmitWait: "0"},
		map[string]string{OutOfSequence: "4294967290", RpCNPHandled: "0"})
	base := SysfsPortDir(dir, "mlx5_2", 1)
	var out syncBuffer
	s, err := NewSysfsSampler(dir, "mlx5_2", 1, 20*time.Millisecond, &out)
	if err != nil {
		t.Fatal(err)
	}
	var errsMu sync.Mutex
	var errs []error
	s.OnError = func(e error) { errsMu.Lock(); errs = append(errs, e); errsMu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	// Rewrite the counters between samples: data grows 1000 words per step,
	// out_of_sequence (a 32-bit Q counter) wraps at 2^32, port_xmit_wait
	// disappears for a while.
	waitSamples := func(n uint64) {
		if !testenv.Poll(0, func() bool { return s.Samples() >= n }) {
			t.Fatalf("sampler stuck at %d samples", s.Samples())
		}
	}
	for step := 1; step <= 4; step++ {
		waitSamples(uint64(2 * step))
		writeFileAtomic(t, filepath.Join(base, "counters", PortXmitData), strconv.Itoa(1000*step))
		writeFileAtomic(t, filepath.Join(base, "hw_counters", OutOfSequence), strconv.FormatUint((4294967290+uint64(10*step))&0xFFFFFFFF, 10))
		if step == 2 {
			os.Remove(filepath.Join(base, "counters", PortXmitWait))
			// Until a sample missed it: on a busy machine two samples may
			// come back to back, both before the removal.
			testenv.WaitFor(t, 0, "a sample that missed the removed port_xmit_wait", func() bool { return s.Failures().Reads > 0 })
		}
		if step == 3 {
			writeFileAtomic(t, filepath.Join(base, "counters", PortXmitWait), "77")
		}
	}
	waitSamples(10)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	errsMu.Lock()
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), filepath.Join(base, "counters", PortXmitWait)) {
		t.Errorf("read errors %v", errs)
	}
	errsMu.Unlock()

	text := out.String()
	if !strings.HasPrefix(text, "# ibscope-telemetry v1 source=mlx5_2/1 clock=host interval_ns=20000000\n") {
		t.Errorf("header: %q", text[:min(len(text), 120)])
	}
	got, err := ReadSidecar(strings.NewReader(text), "sidecar")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d series", len(got))
	}
	g := got[0]
	if g.Len() < 10 || uint64(g.Len()) != s.Samples() {
		t.Errorf("%d samples read, sampler wrote %d", g.Len(), s.Samples())
	}
	if len(g.Warnings) != 0 {
		t.Errorf("warnings %v", g.Warnings)
	}
	data, cnp, wait := g.Col(PortXmitData), g.Col(OutOfSequence), g.Col(PortXmitWait)
	if g.Value(g.Len()-1, data) != 4000 {
		t.Errorf("last port_xmit_data %d", g.Value(g.Len()-1, data))
	}
	total, err := g.DeltaWithin(data, g.TimeNs(0), g.TimeNs(g.Len()-1))
	if err != nil || total.Value != 4000 {
		t.Errorf("port_xmit_data total %+v %v", total, err)
	}
	if b, _ := g.Counters[data].ToBase(total.Value); b != 16000 {
		t.Errorf("bytes %d", b)
	}
	c, err := g.DeltaWithin(cnp, g.TimeNs(0), g.TimeNs(g.Len()-1))
	if err != nil || c.Value != 40 || c.Flags&FlagWrapped == 0 {
		t.Errorf("out_of_sequence across wrap %+v %v", c, err)
	}
	missing := 0
	for i := 0; i < g.Len(); i++ {
		if !g.Valid(i, wait) {
			missing++
		}
		if i > 0 && (g.SampleID[i] != g.SampleID[i-1]+1 || g.StartNs[i] < g.EndNs[i-1]) {
			t.Errorf("sample %d out of order", i)
		}
	}
	if missing == 0 || g.Valid(g.Len()-1, wait) == false {
		t.Errorf("port_xmit_wait missing in %d samples; last valid %v", missing, g.Valid(g.Len()-1, wait))
	}

	// A capture killed mid-line leaves a readable sidecar.
	cut := text[:len(text)-3]
	got, err = ReadSidecar(strings.NewReader(cut), "cut")
	if err != nil || got[0].Len() != g.Len()-1 {
		t.Fatalf("cut sidecar: %v, %d samples", err, got[0].Len())
	}
	wantWarning(t, got[0], strings.Count(cut, "\n")+1, "incomplete last line")
}

func TestSysfsSamplerErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{PortXmitData: "1"}, nil)
	if _, err := NewSysfsSampler(dir, "mlx5_2", 1, 0, &bytes.Buffer{}); err == nil {
		t.Errorf("zero interval accepted")
	}
	if _, err := NewSysfsSampler(dir, "mlx5_2", 1, time.Second, nil); err == nil {
		t.Errorf("nil writer accepted")
	}
	if _, err := NewSysfsSampler(dir, "nope", 1, time.Second, &bytes.Buffer{}); err == nil {
		t.Errorf("missing device accepted")
	}
	s, err := NewSysfsSampler(dir, "mlx5_2", 1, time.Hour, failWriter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "write sidecar") {
		t.Errorf("write failure: %v", err)
	}
	// Failures counted, and kept to show, when OnError is nil.
	os.WriteFile(filepath.Join(SysfsPortDir(dir, "mlx5_2", 1), "counters", PortXmitData), []byte("bad"), 0o644)
	var buf bytes.Buffer
	s, _ = NewSysfsSampler(dir, "mlx5_2", 1, time.Hour, &buf)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if f := s.Failures(); f.Reads != 2 || f.Samples != 2 || f.GoneSamples != 0 || len(f.First) != 2 || s.Samples() != 2 {
		t.Errorf("failures %+v samples %d", f, s.Samples())
	}
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, os.ErrClosed }
