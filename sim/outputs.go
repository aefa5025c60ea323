package sim

import (
	"fmt"
	"path/filepath"

	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/telemetry"
)

// TruthFile is the ground truth's name in the output directory.
const TruthFile = "truth.json"

// outputFile is one file a scenario writes, relative to the output
// directory, with the key that names it.
type outputFile struct{ name, key string }

// outputs lists every file the scenario writes. Validate has filled in the
// defaults.
func (s *Scenario) outputs() []outputFile {
	outs := []outputFile{{TruthFile, "ibsim's own " + TruthFile}}
	for i, t := range s.Taps {
		outs = append(outs, outputFile{t.File, fmt.Sprintf("taps[%d].file", i)})
	}
	t := s.Telemetry
	if t == nil {
		return outs
	}
	outs = append(outs, outputFile{t.File, "telemetry.file"})
	for _, ref := range s.samplePortRefs() {
		node, num, _ := splitPortRef(ref)
		if t.SidecarDir != "" {
			outs = append(outs, outputFile{filepath.Join(t.SidecarDir, sidecarName(node, num)), "telemetry.sidecar_dir"})
		}
		if t.SysfsDir != "" {
			for _, c := range sysfsCounters {
				outs = append(outs, outputFile{sysfsCounterFile(t.SysfsDir, node, num, c), "telemetry.sysfs_dir"})
			}
		}
	}
	return outs
}

// samplePortRefs are the "node/port" names telemetry samples: those listed,
// or every port in the order the links number them.
func (s *Scenario) samplePortRefs() []string {
	if len(s.Telemetry.Ports) > 0 {
		return s.Telemetry.Ports
	}
	var refs []string
	next := map[string]int{}
	for _, l := range s.Links {
		for _, n := range []string{l.A, l.B} {
			next[n]++
			refs = append(refs, fmt.Sprintf("%s/%d", n, next[n]))
		}
	}
	return refs
}

// sidecarName is a sampled port's sidecar file, in telemetry.sidecar_dir.
func sidecarName(node string, num int) string { return fmt.Sprintf("%s-%d.telemetry.csv", node, num) }

// sysfsCounterFile is where a port's final counter goes under
// telemetry.sysfs_dir, as Linux lays it out.
func sysfsCounterFile(root, node string, num int, counter string) string {
	return filepath.Join(telemetry.SysfsPortDir(root, node, num), "counters", counter)
}

// checkOutputs keeps every output inside the output directory (no absolute
// path, no "..") and refuses two outputs of one name, or one inside the
// other, naming the key.
func (s *Scenario) checkOutputs() error {
	for i, t := range s.Taps {
		if err := outfile.CheckName(t.File); err != nil {
			return keyErr(fmt.Sprintf("taps[%d].file", i), "%v", err)
		}
	}
	if t := s.Telemetry; t != nil {
		for _, c := range []struct{ key, name string }{
			{"telemetry.file", t.File}, {"telemetry.sidecar_dir", t.SidecarDir}, {"telemetry.sysfs_dir", t.SysfsDir},
		} {
			if c.name == "" {
				continue
			}
			if err := outfile.CheckName(c.name); err != nil {
				return keyErr(c.key, "%v", err)
			}
		}
	}
	outs := s.outputs()
	owner := make(map[string]string, len(outs))
	for _, o := range outs {
		name := filepath.Clean(o.name)
		if k, ok := owner[name]; ok {
			return keyErr(o.key, "%q is also the file of %s; every output needs a name of its own", o.name, k)
		}
		owner[name] = o.key
	}
	for _, o := range outs {
		name := filepath.Clean(o.name)
		for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
			if k, ok := owner[d]; ok {
				return keyErr(o.key, "%q would be inside %q, the file of %s", o.name, d, k)
			}
		}
	}
	return nil
}
