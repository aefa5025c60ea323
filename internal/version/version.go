// Package version says which build of ibscope is running: the module
// version and, for a binary built from a clone, the VCS revision, as
// runtime/debug.ReadBuildInfo records them. The commands print it for
// --version; writers can name the application with it (pcapng shb_userappl,
// Parquet created_by).
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Build is what the binary records about how it was built.
type Build struct {
	Module    string // module version: "v1.2.3"; a build from a clone has a pseudo-version (Go 1.24+) or "(devel)"
	Revision  string // VCS revision (commit hash); "" when not built from a clone
	Modified  bool   // the work tree had uncommitted changes
	Time      string // the revision's commit time (RFC 3339); "" when unknown
	GoVersion string // toolchain, e.g. "go1.26.8"
}

// Read returns the running binary's build information. A binary without
// any (a test binary, a stripped build) gives Module "(unknown)".
func Read() Build {
	b := Build{Module: "(unknown)", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.Module = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			b.Time = s.Value
		}
	}
	return b
}

// String is the one-line form: "v1.2.3, go1.26.8 linux/amd64", or from a
// clone "v0.0.0-20261124170000-0123456789ab+dirty revision 0123...
// (modified), 2026-11-24T17:00:00Z, go1.26.8 linux/amd64".
func (b Build) String() string {
	var s strings.Builder
	s.WriteString(b.Module)
	if b.Revision != "" {
		s.WriteString(" revision ")
		s.WriteString(b.Revision)
		if b.Modified {
			s.WriteString(" (modified)")
		}
	}
	if b.Time != "" {
		s.WriteString(", ")
		s.WriteString(b.Time)
	}
	s.WriteString(", ")
	s.WriteString(b.GoVersion)
	s.WriteString(" " + runtime.GOOS + "/" + runtime.GOARCH)
	return s.String()
}

// Application names a program of this build for file headers:
// "ibcap (ibscope v1.2.3)"; a build from a clone adds the short revision
// and + when modified: "ibcap (ibscope (devel) 0123456789ab+)".
func Application(program string) string {
	b := Read()
	v := b.Module
	// A pseudo-version already names the revision (and +dirty).
	if short := b.Revision[:min(12, len(b.Revision))]; short != "" && !strings.Contains(v, short) {
		v += " " + short
		if b.Modified {
			v += "+"
		}
	}
	return program + " (ibscope " + v + ")"
}

// For a cobra command's --version: set cmd.Version to Read().String(),
// define the flag as Bool("version", false, FlagUsage) so that cobra adds
// no -v (tcpdump's -v is verbosity), and SetVersionTemplate(Template).
const (
	FlagUsage = "print the version (module, VCS revision) and exit"
	Template  = "{{.Name}} {{.Version}}\n"
)
