package correlate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

// TestCorrelateCongestion joins a capture of pauses and IFA probes on 10 us
// windows: each pause's time lands in the windows it overlaps, per
// priority, and each window gives its probes' longest hop residence.
func TestCorrelateCongestion(t *testing.T) {
	const w = 10_000 // window, ns
	t0 := int64(1_767_000_000_000_000_000)
	write := testcap.Packet{Src: 1, Dst: 9, QP: 0x11, Op: 0x0A, Payload: 64, DMALen: 64}
	probe := func(res0, res1 uint32) []byte {
		return testcap.IFAProbe(t, write, []decode.IFAHop{{LNS: 1, DeviceID: 0xA2, EgressPort: 2, ResidenceNs: res0}, {LNS: 1, DeviceID: 0xA1, EgressPort: 1, ResidenceNs: res1}})
	}
	frames := []testcap.Frame{
		{TsNs: t0 + 1000, B: testcap.RoCEAt(t, write, 26, -1)},
		// Priority 3: 8,000 ns from 5 us, then XON: 5 us in window 0, 3 us in window 1.
		{TsNs: t0 + 5000, B: testcap.PFCFrame(t, 9, map[int]uint16{3: 2000})},
		{TsNs: t0 + 13_000, B: testcap.PFCFrame(t, 9, map[int]uint16{3: 0})},
		{TsNs: t0 + 14_000, B: probe(700, 900)},
		{TsNs: t0 + 15_000, B: probe(1500, 100)},
		// An 802.3x PAUSE at 25 us of 1000 quanta: every priority, 5,120 ns,
		// 5,000 in window 2 and 120 in window 3.
		{TsNs: t0 + 25_000, B: testcap.MACControlFrame(t, 10, &decode.Pause{Opcode: decode.MACControlOpPause, Quanta: 1000})},
		// Priority 5 still paused at the end: counted to its timer's end
		// (48.24 us), 2,000 ns of it in window 3, the last.
		{TsNs: t0 + 38_000, B: testcap.PFCFrame(t, 9, map[int]uint16{5: 2000})},
		{TsNs: t0 + 39_000, B: testcap.RoCEAt(t, write, 26, -1)},
	}
	dir := t.TempDir()
	capPath := testcap.WriteFrames(t, "cap.pcap", frames)
	s := telemetry.NewSeries(telemetry.Source{Device: "mlx5_0", Port: 1}, telemetry.ClockHost,
		[]telemetry.Counter{telemetry.SysfsCounter("counters", telemetry.PortXmitData)})
	for k := range 6 {
		s.Append(uint64(k), t0+int64(k)*w, t0+int64(k)*w, []uint64{uint64(k)})
	}
	tel := filepath.Join(dir, "tel.csv")
	f, err := os.Create(tel)
	if err != nil {
		t.Fatal(err)
	}
	if err := testtel.WriteSidecar(f, s); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(dir, "out.arrow")
	if _, err := Correlate([]string{capPath}, []string{tel}, out, Options{Format: FormatArrow, OffsetGiven: true, WindowNs: w, PauseBitsPerSec: 100e9}); err != nil {
		t.Fatal(err)
	}
	rows := readArrowColumns(t, out, "start_ns", "cap_paused_ns_p3", "cap_paused_ns_p5", "cap_paused_ns_p0", "cap_ifa_probes", "cap_ifa_max_residence_ns", "cap_ifa_max_residence_hop")
	want := [][]any{ // per window: p3, p5, p0, probes, max residence, its hop
		{int64(5000), int64(0), int64(0), uint64(0), nil, nil},
		{int64(3000), int64(0), int64(0), uint64(2), int64(1500), "dev 0x000a2/1 port 2"},
		{int64(5000), int64(5000), int64(5000), uint64(0), nil, nil},
		{int64(120), int64(2120), int64(120), uint64(0), nil, nil},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(rows), len(want), rows)
	}
	for i := range want {
		for c := range want[i] {
			if rows[i][c+1] != want[i][c] {
				t.Errorf("window %d, %s: %v, want %v", i, []string{"p3", "p5", "p0", "probes", "max residence", "hop"}[c], rows[i][c+1], want[i][c])
			}
		}
	}
}

// readArrowColumns reads the named columns of an Arrow IPC file, a row a
// slice (nil for null; int64, uint64 or string values).
func readArrowColumns(t *testing.T, path string, names ...string) [][]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows [][]any
	for b := 0; b < r.NumRecords(); b++ {
		rec, err := r.RecordBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		base := len(rows)
		for range rec.NumRows() {
			rows = append(rows, make([]any, len(names)))
		}
		for c, name := range names {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) != 1 {
				t.Fatalf("column %s: %d of them", name, len(idx))
			}
			col := rec.Column(idx[0])
			for i := range int(rec.NumRows()) {
				if col.IsNull(i) {
					continue
				}
				switch a := col.(type) {
				case *array.Int64:
					rows[base+i][c] = a.Value(i)
				case *array.Uint64:
					rows[base+i][c] = a.Value(i)
				case *array.String:
					rows[base+i][c] = a.Value(i)
				case *array.Timestamp:
					rows[base+i][c] = int64(a.Value(i))
				default:
					t.Fatalf("column %s: type %T", name, col)
				}
			}
		}
	}
	return rows
}
