package capture

import (
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// readAll reads every record of a capture file.
func readAll(t *testing.T, path string) (recs [][]byte, frames []decode.Frame) {
	t.Helper()
	recs, frames, err := testcap.FileRecords(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs, frames
}
