// Command benchtel writes the telemetry side of bench/correlate.sh: an
// ibscope sidecar with -samples evenly spaced samples over a capture's time
// range, on a NIC free-running clock running -behind ns behind the capture's,
// whose port_xmit_data follows the capture's bytes (in 4-byte words) and
// whose np_cnp_sent counts its CNPs, so that offset estimation has the real
// byte pattern to find.
//
//	go run ./correlate/testdata/benchtel -capture rocev2.pcap -samples 100000 -o tel.csv
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

func main() {
	capture := flag.String("capture", "", "capture `FILE` whose time range and bytes the telemetry follows")
	samples := flag.Int("samples", 100000, "number of samples")
	behind := flag.Int64("behind", 2_500_000_000_123, "the NIC clock runs this many `ns` behind the capture's")
	out := flag.String("o", "", "output sidecar `FILE`")
	flag.Parse()
	if err := run(*capture, *samples, *behind, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchtel:", err)
		os.Exit(1)
	}
}

// frameTimes reads every frame's time, wire length and whether it is a CNP.
func frameTimes(path string) (ts []int64, lens []int, cnp []bool, err error) {
	r, err := capfile.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer r.Close()
	var f decode.Frame
	for {
		err := r.Next(&f)
		if err == io.EOF {
			return ts, lens, cnp, nil
		}
		var de *capfile.DecodeError
		if err != nil && !errors.As(err, &de) {
			return nil, nil, nil, err
		}
		ts = append(ts, f.TsNs)
		lens = append(lens, f.WireLen)
		cnp = append(cnp, f.Has&decode.HasBTH != 0 && f.BTH.OpCode.IsCNP())
	}
}

func run(capture string, samples int, behind int64, out string) error {
	if capture == "" || out == "" || samples < 2 {
		return errors.New("need -capture, -o and -samples >= 2")
	}
	ts, lens, cnp, err := frameTimes(capture)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		return fmt.Errorf("%s: no frames", capture)
	}
	first, last := ts[0], ts[len(ts)-1]
	s := telemetry.NewSeries(telemetry.Source{Device: "mlx5_0", Port: 1}, telemetry.ClockNICFree, []telemetry.Counter{
		telemetry.SysfsCounter("counters", telemetry.PortXmitData),
		telemetry.SysfsCounter("hw_counters", telemetry.NpCNPSent),
	})
	var bytes, cnps uint64
	j := 0
	for k := 0; k < samples; k++ {
		t := first + int64(k)*(last-first)/int64(samples-1)
		for j < len(ts) && ts[j] < t {
			bytes += uint64(lens[j])
			if cnp[j] {
				cnps++
			}
			j++
		}
		s.Append(uint64(k), t-behind, t-behind, []uint64{bytes / 4, cnps})
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := testtel.WriteSidecar(w, s); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	return f.Close()
}
