package testcap

import (
	"errors"
	"io"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// Records reads every record left in r, in order: a copy of each record's
// bytes and its frame metadata. On an error it returns what came before it
// and the error.
func Records(r *capfile.Reader) (recs [][]byte, frames []decode.Frame, err error) {
	for {
		var f decode.Frame
		data, err := r.NextRecord(&f)
		if errors.Is(err, io.EOF) {
			return recs, frames, nil
		}
		if err != nil {
			return recs, frames, err
		}
		recs = append(recs, append([]byte(nil), data...))
		frames = append(frames, f)
	}
}

// FileRecords is Records of the capture file at path.
func FileRecords(path string) (recs [][]byte, frames []decode.Frame, err error) {
	r, err := capfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	return Records(r)
}
