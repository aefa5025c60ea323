package sim

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ibscope/ibscope/telemetry"
)

// perfqueryWriter writes port-counter snapshots as `perfquery` prints them,
// each preceded by a "# ts_ns=" line (the form telemetry.ReadPerfquery
// takes as the snapshot's time).
type perfqueryWriter struct {
	name  string
	file  *os.File
	bw    *bufio.Writer
	ports []*port
	err   error
}

func newPerfqueryWriter(path string, ports []*port) (*perfqueryWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &perfqueryWriter{name: path, file: f, bw: bufio.NewWriter(f), ports: ports}, nil
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

func (w *perfqueryWriter) close() error {
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("%s: %w", w.name, err)
	}
	if err := w.file.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", w.name, err)
	}
	return w.err
}

// writeSysfs writes each port's final counters where Linux keeps them,
// ROOT/class/infiniband/NODE/ports/N/counters/NAME (data in 4-byte words,
// PortXmitWait in ticks), for telemetry.ReadSysfs.
func writeSysfs(root string, ports []*port, nowPs int64) error {
	for _, p := range ports {
		dir := filepath.Join(telemetry.SysfsPortDir(root, p.node.name, p.num), "counters")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for name, v := range map[string]uint64{
			telemetry.PortXmitData: p.xmitBytes / 4, telemetry.PortRcvData: p.rcvBytes / 4,
			telemetry.PortXmitPackets: p.xmitPkts, telemetry.PortRcvPackets: p.rcvPkts,
			telemetry.PortXmitWait: p.xw.counter(nowPs),
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintln(v)), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
