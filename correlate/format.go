package correlate

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Format is an output file format.
type Format uint8

// Output formats.
const (
	FormatParquet Format = iota // Apache Parquet, zstd-compressed
	FormatArrow                 // Arrow IPC file format ("Feather v2"), zstd-compressed buffers
	FormatCSV                   // CSV after a line of pandas dtypes (textTable)
	FormatJSONL                 // JSON Lines, one object per row (textTable)
)

// FormatNames is what --format takes, for help and messages.
const FormatNames = "parquet, arrow, csv or jsonl"

func (f Format) String() string {
	switch f {
	case FormatArrow:
		return "arrow"
	case FormatCSV:
		return "csv"
	case FormatJSONL:
		return "jsonl"
	}
	return "parquet"
}

// Ext is the file name extension the format is written with.
func (f Format) Ext() string {
	if f == FormatParquet {
		return ".parquet"
	}
	return "." + f.String()
}

// ParseFormat reads a --format name: parquet, arrow (feather), csv, jsonl
// (ndjson).
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "parquet":
		return FormatParquet, nil
	case "arrow", "feather":
		return FormatArrow, nil
	case "csv":
		return FormatCSV, nil
	case "jsonl", "ndjson":
		return FormatJSONL, nil
	}
	return 0, fmt.Errorf("--format %q: want %s", name, FormatNames)
}

// FormatFromPath picks the format from an output file's extension:
// .parquet or .pq for Parquet; .arrow, .feather or .ipc for Arrow IPC;
// .csv; .jsonl or .ndjson for JSON Lines.
func FormatFromPath(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return FormatParquet, nil
	case ".arrow", ".feather", ".ipc":
		return FormatArrow, nil
	case ".csv":
		return FormatCSV, nil
	case ".jsonl", ".ndjson":
		return FormatJSONL, nil
	}
	return 0, fmt.Errorf("%s: cannot tell the format from the extension (want .parquet, .arrow, .csv or .jsonl, or --format)", path)
}
