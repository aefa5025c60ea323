package sim

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/telemetry"
)

// perfqueryWriter writes port-counter snapshots as `perfquery` prints them,
// each preceded by a "# ts_ns=" line (the form telemetry.ReadPerfquery
// takes as the snapshot's time).
type perfqueryWriter struct {
	bw    *bufio.Writer
	ports []*port
}

func newPerfqueryWriter(f *outfile.File, ports []*port) *perfqueryWriter {
	return &perfqueryWriter{bw: bufio.NewWriter(f), ports: ports}
}

// perfqueryLine formats "Name:......value" with the value in column 33, as
// perfquery aligns it.
func perfqueryLine(name string, v uint64) string {
	dots := max(1, 32-len(name)-1)
	return name + ":" + strings.Repeat(".", dots) + fmt.Sprint(v) + "\n"
}

// sample writes one snapshot of every port at wall time ns.
func (w *perfqueryWriter) sample(ns, nowPs int64) {
	for _, p := range w.ports {
		fmt.Fprintf(w.bw, "# ts_ns=%d\n# Port counters: Lid %d port %d\n", ns, p.node.lid, p.num)
		w.bw.WriteString(perfqueryLine("PortSelect", uint64(p.num)))
		w.bw.WriteString(perfqueryLine("PortXmitData", p.xmitBytes/4))
		w.bw.WriteString(perfqueryLine("PortRcvData", p.rcvBytes/4))
		w.bw.WriteString(perfqueryLine("PortXmitPkts", p.xmitPkts))
		w.bw.WriteString(perfqueryLine("PortRcvPkts", p.rcvPkts))
		w.bw.WriteString(perfqueryLine("PortXmitWait", p.xw.counter(nowPs)))
	}
}

// close flushes the snapshots to the file (which the run commits); the
// error names the file.
func (w *perfqueryWriter) close() error { return w.bw.Flush() }

// sysfsCounters are the sysfs port counters the simulator keeps, in the
// order sysfsValues gives them.
var sysfsCounters = []string{telemetry.PortXmitData, telemetry.PortRcvData, telemetry.PortXmitPackets,
	telemetry.PortRcvPackets, telemetry.PortXmitWait}

// sysfsValues are a port's counters as sysfs shows them: data in 4-byte
// words, PortXmitWait in ticks.
func sysfsValues(p *port, nowPs int64) []uint64 {
	return []uint64{p.xmitBytes / 4, p.rcvBytes / 4, p.xmitPkts, p.rcvPkts, p.xw.counter(nowPs)}
}

// sidecars write each sampled port's sysfs counters as a telemetry sidecar.
type sidecars struct {
	bufs    []*bufio.Writer
	writers []*telemetry.SidecarWriter
	ports   []*port
	samples uint64
	err     error
}

func (r *run) newSidecars(dir string) (*sidecars, error) {
	ports := r.samplePorts
	sc := &sidecars{ports: ports}
	counters := make([]telemetry.Counter, len(sysfsCounters))
	for i, n := range sysfsCounters {
		counters[i] = telemetry.SysfsCounter("counters", n)
	}
	for _, p := range ports {
		f, err := r.create(filepath.Join(dir, sidecarName(p.node.name, p.num)))
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriter(f)
		w, err := telemetry.NewSidecarWriter(bw, telemetry.Source{Device: p.node.name, Port: p.num}, telemetry.ClockHost,
			counters, map[string]string{"source": "ibsim"})
		sc.bufs = append(sc.bufs, bw)
		if err != nil {
			return nil, err
		}
		sc.writers = append(sc.writers, w)
	}
	return sc, nil
}

func (sc *sidecars) sample(ns, nowPs int64) {
	for i, p := range sc.ports {
		if err := sc.writers[i].Write(sc.samples, ns, ns, sysfsValues(p, nowPs), nil); err != nil && sc.err == nil {
			sc.err = err
		}
	}
	sc.samples++
}

// close flushes every sidecar to its file (which the run commits).
func (sc *sidecars) close() error {
	for _, bw := range sc.bufs {
		if err := bw.Flush(); err != nil && sc.err == nil {
			sc.err = err
		}
	}
	return sc.err
}

// writeSysfs writes each sampled port's final counters where Linux keeps
// them, ROOT/class/infiniband/NODE/ports/N/counters/NAME, for
// telemetry.ReadSysfs.
func (r *run) writeSysfs(root string) error {
	for _, p := range r.samplePorts {
		for i, v := range sysfsValues(p, r.nowPs) {
			f, err := r.create(sysfsCounterFile(root, p.node.name, p.num, sysfsCounters[i]))
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(f, v); err != nil {
				return err
			}
		}
	}
	return nil
}
