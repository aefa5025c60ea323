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
)

func (f Format) String() string {
	if f == FormatArrow {
		return "arrow"
	}
	return "parquet"
}

// Ext is the file name extension the format is written with.
func (f Format) Ext() string {
	if f == FormatArrow {
		return ".arrow"
	}
	return ".parquet"
}

// FormatFromPath picks the format from an output file's extension:
// .parquet or .pq for Parquet; .arrow, .feather or .ipc for Arrow IPC.
func FormatFromPath(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return FormatParquet, nil
	case ".arrow", ".feather", ".ipc":
		return FormatArrow, nil
	}
	return 0, fmt.Errorf("%s: cannot tell the format from the extension (want .parquet or .arrow)", path)
}
