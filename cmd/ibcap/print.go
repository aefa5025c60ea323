package main

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// packetPrinter prints a capture as one decoded line per packet, as
// tcpdump does without -w: the capture writes pcap into a pipe as it would
// into a file, and the printer reads it back with capfile and prints each
// frame's summary line, as ibanalyze decode does. One path for what is
// written and what is printed, so the counts, filters and snap length are
// the same.
type packetPrinter struct {
	pw   *io.PipeWriter
	done chan error
}

// startPrinter prints what is written to the printer's pipe (pipe()) on
// out; lineBuffered writes each line out at once (a live capture),
// otherwise in 64 KiB blocks.
func startPrinter(out io.Writer, opts decode.SummaryOptions, lineBuffered bool) *packetPrinter {
	pr, pw := io.Pipe()
	p := &packetPrinter{pw: pw, done: make(chan error, 1)}
	go func() {
		err := printPackets(pr, out, opts, lineBuffered)
		// A printer that stops early (stdout closed) fails the writer's
		// next write, which ends the capture.
		pr.CloseWithError(errOrClosed(err))
		p.done <- err
	}()
	return p
}

func errOrClosed(err error) error {
	if err == nil {
		return io.ErrClosedPipe
	}
	return err
}

// pipe is where the capture writes the packets to print.
func (p *packetPrinter) pipe() io.Writer { return p.pw }

// finish ends the printer once the writer is closed, and returns its error.
func (p *packetPrinter) finish() error {
	p.pw.Close()
	return <-p.done
}

func printPackets(in io.Reader, out io.Writer, opts decode.SummaryOptions, lineBuffered bool) error {
	r, err := capfile.NewReader(in, "capture")
	if err != nil {
		return err
	}
	defer r.Close()
	bw := bufio.NewWriterSize(out, 64<<10)
	var f decode.Frame
	var line []byte
	for {
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		// Next returns a *DecodeError itself, never wrapped: a type
		// assertion, unlike errors.As(err, &de), does not move de to the
		// heap, an allocation per frame.
		msg := ""
		if de, ok := err.(*capfile.DecodeError); ok {
			msg = de.Err.Error()
		} else if err != nil {
			return err
		}
		if err == nil && !f.Decoded() {
			// Kept by -r, --all or a filter expression: said in the
			// summary's number and time columns.
			line = fmt.Appendf(line[:0], "%6d %s other  not InfiniBand or RoCE  len %d\n", f.Number, time.Unix(0, f.TsNs).UTC().Format("15:04:05.000000000"), f.WireLen)
		} else {
			line = f.AppendSummaryWith(line[:0], msg, opts)
		}
		if _, err := bw.Write(line); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		if lineBuffered {
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
