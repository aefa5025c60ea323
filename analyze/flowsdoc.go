package analyze

import (
	"encoding/json"
	"io"
)

// writeFlowsDoc writes {"flows": [...], ...} exactly as encoding/json
// indents it by two spaces, encoding one flow at a time, so that a report
// of a million flows is never held whole: flow(i) is the i-th of n flows,
// head a struct of the document's other fields, which follow "flows".
func writeFlowsDoc(w io.Writer, n int, flow func(i int) any, head any) error {
	tail, err := json.MarshalIndent(head, "", "  ")
	if err != nil {
		return err
	}
	ew := &errWriter{w: w}
	ew.write([]byte("{\n  \"flows\": ["))
	for i := range n {
		f, err := json.MarshalIndent(flow(i), "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			ew.write([]byte(","))
		}
		ew.write([]byte("\n    "))
		ew.write(f)
	}
	if n > 0 {
		ew.write([]byte("\n  "))
	}
	ew.write([]byte("],\n"))
	ew.write(tail[len("{\n"):])
	ew.write([]byte("\n"))
	return ew.err
}

// errWriter keeps the first write error and writes nothing after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}
