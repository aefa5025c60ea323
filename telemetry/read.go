package telemetry

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// Options tune the readers. The zero value (or nil) suits most files.
type Options struct {
	// DataIDs name DOCA telemetry_diag columns by data ID (the data-IDs JSON
	// the capture used; see ReadDataIDs). For formats 1 and 2 they give the
	// columns their data IDs (by name, or by position when the counts agree);
	// for format 0 they name the data IDs.
	DataIDs []DataIDName
	// DiagFormat forces the telemetry_diag output format; DiagAuto detects it.
	DiagFormat DiagFormat
	// ClearOnSample says the telemetry_diag capture ran with "data clear"
	// (synchronized start with counters cleared each sample): every value
	// is then the per-interval delta. The CSV does not record it.
	ClearOnSample bool
	// Source fills in the device and port where the file does not name them
	// (telemetry_diag CSV).
	Source Source
}

// Format is a telemetry file format.
type Format uint8

const (
	FormatUnknown   Format = iota
	FormatDiagCSV          // DOCA telemetry_diag sample CSV
	FormatSidecar          // ibscope sidecar (SidecarWriter)
	FormatPerfquery        // perfquery / perfquery -x text
)

func (f Format) String() string {
	switch f {
	case FormatDiagCSV:
		return "doca_diag_csv"
	case FormatSidecar:
		return "sidecar"
	case FormatPerfquery:
		return "perfquery"
	}
	return "unknown"
}

// DetectFormat tells the format from the first bytes of a file (a few KiB
// are plenty).
func DetectFormat(head []byte) Format {
	lines := bytes.Split(bytes.TrimPrefix(head, utf8BOM), []byte("\n"))
	first := true
	for _, l := range lines {
		t := trimSpace(bytes.TrimRight(l, "\r"))
		if len(t) == 0 {
			continue
		}
		if first {
			first = false
			if bytes.HasPrefix(t, []byte("# ibscope-telemetry")) {
				return FormatSidecar
			}
			if looksLikeDiag(t) {
				return FormatDiagCSV
			}
		}
		if bytes.HasPrefix(t, []byte("# Port counters:")) || bytes.HasPrefix(t, []byte("# Port extended counters:")) {
			return FormatPerfquery
		}
		if _, v, ok := splitPerfField(t); ok && bytes.Contains(t, []byte(":.")) {
			if _, ok := parseUint(v); ok {
				return FormatPerfquery
			}
		}
	}
	return FormatUnknown
}

// Read sniffs the format of r and reads every series in it. name names the
// input in messages.
func Read(r io.Reader, name string, opts *Options) ([]*Series, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(8 << 10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, fmt.Errorf("telemetry: %s: %w", name, err)
	}
	if len(bytes.TrimSpace(bytes.TrimPrefix(head, utf8BOM))) == 0 {
		return nil, perr(name, 0, "empty file")
	}
	switch DetectFormat(head) {
	case FormatSidecar:
		return ReadSidecar(br, name)
	case FormatDiagCSV:
		s, err := ReadDiagCSV(br, name, opts)
		if err != nil {
			return nil, err
		}
		return []*Series{s}, nil
	case FormatPerfquery:
		return ReadPerfquery(br, name)
	}
	return nil, perr(name, 0, "unknown telemetry format: not a DOCA telemetry_diag CSV, an ibscope sidecar or perfquery output")
}

// ReadFile opens path, sniffs its format (DOCA telemetry_diag CSV, ibscope
// sidecar, perfquery text) and reads every series in it.
func ReadFile(path string, opts *Options) ([]*Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	defer f.Close()
	return Read(f, path, opts)
}
