package correlate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/sim"
)

// TestDirectionFromIbsimTaps runs ibsim, whose taps record each frame's
// direction in the ERF interface bits (0 sent by the tapped port, 1
// received), and checks that export names it per row and that correlate,
// without --local, fills cap_tx_ and cap_rx_ from it: per interval they add
// up to cap_, and over the run they count the frames the tap holds of each
// interface.
func TestDirectionFromIbsimTaps(t *testing.T) {
	dir := t.TempDir()
	s := sim.Incast(sim.IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 64 << 10, SamplePeriodNs: 20_000})
	truth, err := sim.Run(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if truth.Telemetry == nil {
		t.Fatal("the incast preset wrote no telemetry")
	}
	capture := filepath.Join(dir, "s1.pcap")
	exported := filepath.Join(dir, "s1.parquet")
	if _, err := Export([]string{capture}, exported, ExportOptions{Format: FormatParquet}); err != nil {
		t.Fatal(err)
	}
	joined := filepath.Join(dir, "joined.parquet")
	res, err := Correlate([]string{capture}, []string{filepath.Join(dir, truth.Telemetry.File)}, joined, Options{Format: FormatParquet, OffsetGiven: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.DirectionKnown {
		t.Error("correlate: direction not known from the ERF interfaces")
	}
	got := readBack(t,
		readJob{Kind: "sql", Path: exported, SQL: "SELECT iface, direction, count(*) AS n FROM t GROUP BY ALL ORDER BY iface"},
		readJob{Kind: "sql", Path: exported, SQL: "SELECT count(DISTINCT ts_ns) AS n, count(DISTINCT epoch_ns(ts_ns) // 1000) AS us FROM t"},
		readJob{Kind: "sql", Path: joined, SQL: `SELECT source, count(*) AS rows,
			count(*) FILTER (WHERE cap_packets IS NOT NULL AND (cap_tx_packets IS NULL OR cap_rx_packets IS NULL)) AS nulls,
			count(*) FILTER (WHERE cap_tx_packets + cap_rx_packets <> cap_packets) AS unbalanced,
			sum(cap_tx_packets) AS tx, sum(cap_rx_packets) AS rx FROM t GROUP BY source ORDER BY source`})
	frames := map[string]int{}
	for _, row := range got[0].Rows {
		want := map[string]string{"0": "tx", "1": "rx"}[row["iface"]]
		if row["direction"] != want {
			t.Errorf("export: interface %s has direction %q, want %q", row["iface"], row["direction"], want)
		}
		n, _ := strconv.Atoi(row["n"])
		frames[row["direction"]] += n
	}
	if frames["tx"] == 0 || frames["rx"] == 0 {
		t.Fatalf("export: frames per direction %v, want both", frames)
	}
	// DuckDB keeps the tap's ns: as many distinct times as the capture has
	// (TIMESTAMPTZ, in µs, would show only as many as distinct µs).
	distinct := map[int64]bool{}
	r, err := capfile.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var fr decode.Frame
	for {
		if _, err := r.NextRecord(&fr); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		distinct[fr.TsNs] = true
	}
	if row := got[1].Rows[0]; row["n"] != fmt.Sprint(len(distinct)) || row["us"] == row["n"] {
		t.Errorf("DuckDB sees %s distinct ts_ns (%s distinct µs), the capture has %d", row["n"], row["us"], len(distinct))
	}
	if len(got[2].Rows) == 0 {
		t.Fatal("correlate wrote no rows")
	}
	for _, row := range got[2].Rows {
		if row["tx"] == "0" || row["rx"] == "0" {
			t.Errorf("series %s: %s tx and %s rx packets", row["source"], row["tx"], row["rx"])
		}
		if row["nulls"] != "0" || row["unbalanced"] != "0" {
			t.Errorf("series %s: of %s rows %s with cap_ lack cap_tx_/cap_rx_ and %s do not add up to cap_", row["source"], row["rows"], row["nulls"], row["unbalanced"])
		}
		// The telemetry covers the whole run, so every frame falls in some interval.
		if row["tx"] != fmt.Sprint(frames["tx"]) || row["rx"] != fmt.Sprint(frames["rx"]) {
			t.Errorf("series %s: %s tx and %s rx packets in its intervals; the tap holds %d and %d", row["source"], row["tx"], row["rx"], frames["tx"], frames["rx"])
		}
	}
}

// TestDirectionFromPcapngFlags rewrites a RoCE capture as pcapng whose
// packet blocks say, in epb_flags, odd frames outbound and even ones
// inbound: export's direction column follows them.
func TestDirectionFromPcapngFlags(t *testing.T) {
	in, err := capfile.Open(filepath.Join("..", "testdata", "pcaps", "rocev2_ipv4.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	capture := filepath.Join(t.TempDir(), "dirs.pcapng")
	f, err := os.Create(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capfile.NewPcapWriterConfig(f, capfile.EncoderConfig{LinkType: in.LinkType(), SnapLenBytes: 65535, PcapNG: true})
	if err != nil {
		t.Fatal(err)
	}
	var fr decode.Frame
	frames := 0
	for {
		data, err := in.NextRecord(&fr)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		d := decode.DirectionInbound
		if fr.Number%2 == 1 {
			d = decode.DirectionOutbound
		}
		if err := w.WritePacket(&capfile.Packet{TsNs: fr.TsNs, Data: data, WireLenBytes: fr.WireLen, Direction: d}); err != nil {
			t.Fatal(err)
		}
		frames++
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dirs.parquet")
	if _, err := Export([]string{capture}, out, ExportOptions{Format: FormatParquet}); err != nil {
		t.Fatal(err)
	}
	got := readBack(t, readJob{Kind: "sql", Path: out,
		SQL: "SELECT count(*) FILTER (WHERE direction = CASE WHEN frame % 2 = 1 THEN 'tx' ELSE 'rx' END) AS ok, count(*) AS n FROM t"})
	if row := got[0].Rows[0]; row["ok"] != row["n"] || row["n"] != fmt.Sprint(frames) {
		t.Errorf("%s of %s rows have the direction their epb_flags give; the capture has %d frames", row["ok"], row["n"], frames)
	}
}
