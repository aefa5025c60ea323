package telemetry

import (
	"bytes"
	"io"
)

// What the tests outside the package (package telemetry_test, which write
// their input with internal/testtel) need from inside it.

const (
	MaxNameBytes = maxNameBytes
	MaxMsgBytes  = maxMsgBytes
)

// SplitFields splits each line of data into fields as the readers do and
// returns how many fields there were, for the splitting benchmark.
func SplitFields(data []byte) (fields int) {
	lr := newLineReader(bytes.NewReader(data))
	var f [][]byte
	for {
		line, err := lr.next()
		if err == io.EOF {
			return fields
		}
		f = splitComma(line, f)
		fields += len(f)
	}
}
