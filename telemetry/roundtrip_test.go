package telemetry_test

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"

	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

// The round trips write series with internal/testtel and read them back.

func TestDiagRoundTrip(t *testing.T) {
	ids := []telemetry.DataID{0x1020000100000000, 0x1140000300000001, 0x1180000200000000, 0x1160000d00000000}
	for _, format := range []telemetry.DiagFormat{telemetry.DiagFormat0, telemetry.DiagFormat1, telemetry.DiagFormat2} {
		for _, clock := range []telemetry.Clock{telemetry.ClockNICRealTime, telemetry.ClockNICFree} {
			for _, variant := range []testtel.DiagWriteOptions{{}, {Compact: true}, {UnpaddedNs: true, Compact: true}, {TrailingNewline: true}} {
				if variant.UnpaddedNs && clock == telemetry.ClockNICFree {
					continue
				}
				variant.Format = format
				name := fmt.Sprintf("f%v/%v/%+v", format, clock, variant)
				width := uint8(64)
				if format == telemetry.DiagFormat2 {
					width = 32
				}
				counters := make([]telemetry.Counter, len(ids))
				for j, id := range ids {
					counters[j] = telemetry.DiagCounterFor(id, "", width, false)
				}
				want := testtel.MakeSeries(50, clock, counters, 9)
				if format == telemetry.DiagFormat0 {
					// telemetry.Format 0 stamps each value; the sample spans the earliest to the latest.
					want.ValueNs = make([]int64, len(want.Values))
					for i := 0; i < want.Len(); i++ {
						for j := range ids {
							want.ValueNs[i*len(ids)+j] = want.StartNs[i] + int64(j)*(want.EndNs[i]-want.StartNs[i])/int64(len(ids)-1)
						}
					}
				}
				var buf bytes.Buffer
				if err := testtel.WriteDiagCSV(&buf, want, variant); err != nil {
					t.Fatal(err)
				}
				if !variant.TrailingNewline && bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
					t.Errorf("%s: trailing newline", name)
				}
				opts := &telemetry.Options{DiagFormat: format}
				if format == telemetry.DiagFormat1 {
					opts.DiagFormat = telemetry.DiagAuto // values above 2^32 make auto pick format 1
				}
				got, err := telemetry.ReadDiagCSV(&buf, name, opts)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				testtel.CompareSeries(t, name, want, got, false)
				if got.Lost() != 5*2 {
					t.Errorf("%s: lost %d", name, got.Lost())
				}
			}
		}
	}
}

func TestSidecarRoundTrip(t *testing.T) {
	counters := []telemetry.Counter{
		telemetry.SysfsCounter("counters", telemetry.PortXmitData),
		telemetry.SysfsCounter("counters", telemetry.PortXmitWait),
		telemetry.SysfsCounter("hw_counters", telemetry.NpCNPSent),
		{Name: "odd_gauge", Unit: telemetry.UnitNs, Kind: telemetry.KindGauge, Width: 48, DataID: 0x1160000d00000000},
		{Name: "cleared", Unit: telemetry.UnitCount, Kind: telemetry.KindCounter, Width: 32, ClearOnSample: true},
	}
	want := testtel.MakeSeries(40, telemetry.ClockHost, counters, 13)
	want.SetMissing(5, 1)
	want.SetMissing(6, 4)
	want.Meta = map[string]string{"interval_ns": "1000000"}
	var buf bytes.Buffer
	if err := testtel.WriteSidecar(&buf, want); err != nil {
		t.Fatal(err)
	}
	got, err := telemetry.ReadSidecar(&buf, "side.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d series", len(got))
	}
	testtel.CompareSeries(t, "sidecar", want, got[0], true)
	if got[0].Meta["interval_ns"] != "1000000" || got[0].Meta["format"] != "sidecar" {
		t.Errorf("meta %v", got[0].Meta)
	}
	if got[0].Lost() != want.Lost() || got[0].Lost() == 0 {
		t.Errorf("lost %d want %d", got[0].Lost(), want.Lost())
	}

	// Through telemetry.ReadFile's sniffing, and through a buffered writer.
	var b2 bytes.Buffer
	bw := bufio.NewWriter(&b2)
	sw, err := telemetry.NewSidecarWriter(bw, telemetry.Source{"mlx5_3", 2}, telemetry.ClockNICRealTime, counters[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Write(0, 1, 2, []uint64{9}, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b2.Bytes(), []byte("0,1,2,9\n")) {
		t.Errorf("sample not flushed through bufio: %q", b2.String())
	}
	if err := sw.Write(1, 1, 2, []uint64{9, 9}, nil); err == nil {
		t.Errorf("wrong arity accepted")
	}
	s, err := telemetry.Read(&b2, "x", nil)
	if err != nil || s[0].Source != (telemetry.Source{"mlx5_3", 2}) || s[0].Clock != telemetry.ClockNICRealTime {
		t.Errorf("%v %+v", err, s)
	}
}
