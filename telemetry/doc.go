// Package telemetry reads NIC counters from every source ibscope knows into
// one sample model, and turns counter readings into deltas and rates that
// honour wrap, saturation, clear-on-sample and lost samples.
//
// # Sample model
//
// A Series is a run of samples from one Source (device, port) on one Clock
// (host CLOCK_REALTIME, NIC free-running counter, NIC real-time clock, or
// none). Each sample has a SampleID, an interval [StartNs, EndNs] (int64 ns
// on the clock; ns since the Unix epoch for ClockHost and ClockNICRealTime)
// and one uint64 value per column. Columns are described once, by Counter:
// name, Unit (count, bytes, 4-byte words, ns, ticks, ms), Kind (counter or
// gauge/statistic), Width in bits, and whether it saturates or is cleared at
// each sample. Values are stored flat (len(Counters) per sample, sample after
// sample), so 100,000 samples are a few slices, not 100,000 maps. Values that
// could not be read are marked (Valid); sample_id gaps are lost samples
// (LostBefore, Lost). Readers never silently drop data: rows they skip and
// oddities they step over are Warnings naming file and line, quoting at most
// 64 bytes of a bad value. Column names are unique within a series (a
// repeated header name becomes NAME_2, with a warning) and at most 256
// bytes; a file of more than 65,536 columns is refused. A UTF-8 byte order
// mark before the first line is ignored.
//
// # Deltas and rates
//
// Counter.Delta differences two readings of one counter; Series.Delta,
// Deltas, Rate, DeltaWithin and DeltaCovering do it along a series. DeltaFlags
// say how far to trust a result: FlagWrapped (corrected for one wrap at
// 2^Width), FlagReset, FlagSaturated (a lower bound), FlagGap (samples lost
// between), FlagMissing, FlagGauge (a statistic: no difference taken),
// FlagNoPrev, FlagNoTime. Rates are per second in the base unit: bytes/s for
// port_xmit_data (4-byte words are converted), events/s, ticks/s. A counter
// that drops is taken as one wrap only when the increase that implies is
// possible in the interval (at most 250e9 bytes/s or 1e10 events, ticks or
// ns per second; without timestamps, less than half its range); otherwise it
// was reset (FlagReset: the increase unknown, no rate), and the readers warn
// naming the line.
//
// # Sources
//
//   - DOCA telemetry_diag sample CSV (ReadDiagCSV): output formats 0, 1, 2;
//     ", " or "," separators; RTC "s.ns" timestamps (the ns part an integer,
//     padded or not) and FRC integers; no trailing newline. Column names from
//     the header or a data-IDs JSON (ReadDataIDs); data IDs decode through
//     DiagCatalog (DataID.Name gives "port_1_priority_3_tx_bytes" and the like
//     for unnamed columns).
//   - Linux sysfs (ReadSysfs, SysfsSampler): ports/N/counters and hw_counters
//     of /sys/class/infiniband/DEV.
//   - perfquery and perfquery -x text (ReadPerfquery), with optional
//     timestamp lines the user adds.
//   - The ibscope sidecar (ReadSidecar, SidecarWriter): what
//     `ibcap --telemetry` writes next to a capture.
//
// ReadFile and Read sniff which of these a file is. Port counters carry the
// sysfs names whatever the source (PortXmitWait, PortXmitData, NpCNPSent,
// ... are constants), so analyses look columns up the same way everywhere.
//
// # Example: rates for a correlation
//
//	series, err := telemetry.ReadFile("diag.csv", &telemetry.Options{DataIDs: ids})
//	if err != nil { ... }
//	s := series[0]
//	col := s.Col("port_0_tx_bytes")
//	deltas := s.Deltas(col, nil) // one Delta per sample, reusable buffer
//	for i, d := range deltas {
//		if d.Flags&(telemetry.FlagNoPrev|telemetry.FlagNoTime) != 0 {
//			continue
//		}
//		bytesPerSec := float64(d.Value) / d.Seconds()
//		// join [d.StartNs, d.EndNs] (on s.Clock) with packet series ...
//		_ = i; _ = bytesPerSec
//	}
//
// # Example: ΔPortXmitWait for `ibanalyze tick`
//
//	series, _ := telemetry.ReadFile("perf.txt", nil) // perfquery, sysfs sidecar or DOCA CSV
//	s := series[0]
//	d, err := s.DeltaWithin(s.Col(telemetry.PortXmitWait), fromNs, toNs)
//	// tick = congestion duration / d.Value over [d.StartNs, d.EndNs]
//
// # Example: sampling during a capture
//
//	f, _ := os.Create(pcapPath + ".telemetry.csv")
//	sampler, err := telemetry.NewSysfsSampler("", "mlx5_0", 1, time.Second, f)
//	if err != nil { ... }
//	go func() { errc <- sampler.Run(ctx) }() // samples at start, every second, and at cancel
//
// The package imports nothing else from ibscope.
package telemetry
