package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// outOfBufferCounter is the hw_counter an RDMA device increments for each
// packet it dropped because the receiving QP had no posted buffer: the drop
// count of a verbs capture, as the device saw it.
const outOfBufferCounter = "out_of_buffer"

// portCounter reads one counter of an RDMA port (its sysfs directory
// portDir), from hw_counters or counters, as an unsigned count.
func portCounter(portDir, group, name string) (uint64, error) {
	p := filepath.Join(portDir, group, name)
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

// dropCounter tracks the device's out_of_buffer counter from the start of
// a capture. The counter is the port's, so it also counts drops on other
// QPs of the port; it is the only drop count the device keeps.
type dropCounter struct {
	portDir string
	start   uint64
	known   bool
}

func newDropCounter(portDir string) *dropCounter {
	d := &dropCounter{portDir: portDir}
	if v, err := portCounter(portDir, "hw_counters", outOfBufferCounter); err == nil {
		d.start, d.known = v, true
	}
	return d
}

// drops returns the packets dropped since the start, and whether the device
// has the counter. A counter that went backwards (a driver reset) counts
// from zero again.
func (d *dropCounter) drops() (uint64, bool) {
	if !d.known {
		return 0, false
	}
	v, err := portCounter(d.portDir, "hw_counters", outOfBufferCounter)
	if err != nil {
		return 0, false
	}
	if v < d.start {
		return v, true
	}
	return v - d.start, true
}
