package capfile

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// batchTranscript reads path as a Stream with opts through NextBatch (after
// Next for the first firstByNext frames) and writes down what transcript
// does of each frame and what the stream says (the files' meta, file
// errors, counts, progress), but the resolution, which NextBatch does not
// follow. The frames come from the Projection, lineProjection.
func batchTranscript(t *testing.T, path string, opts StreamOptions, firstByNext, stopAfter int) string {
	t.Helper()
	var b strings.Builder
	opts.OnFileError = func(err error) { fmt.Fprintf(&b, "file: %v\n", err) }
	opts.Project = func(int) Projection { return &lineProjection{} }
	var stop atomic.Bool
	opts.Stop = &stop
	s, err := OpenStream([]string{path}, opts)
	if err != nil {
		return "open: " + err.Error()
	}
	defer s.Close()
	if !s.Batched() {
		t.Fatalf("%s with %+v: not Batched", path, opts)
	}
	n := 0
	for ; n < firstByNext; n++ {
		if _, _, err := s.Next(); err == io.EOF {
			break
		}
		p, i := s.Projected()
		fmt.Fprintf(&b, "%s\n", p.(*lineProjection).line(i))
	}
	for {
		p, from, to, err := s.NextBatch()
		if err == io.EOF {
			break
		}
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "%s\n", p.(*lineProjection).line(i))
		}
		if n += to - from; stopAfter > 0 && n >= stopAfter {
			stop.Store(true)
		}
	}
	st := s.Stats()
	done, total := s.Progress()
	fmt.Fprintf(&b, "frames %d decode errors %d no time %d file errors %d progress %d of %d\n", st.Frames, st.DecodeErrors, st.NoTime, st.FileErrors, done, total)
	return b.String()
}

// TestNextBatchSameAsNext: the frames NextBatch hands out, batch after
// batch, are those Next hands out one by one, with the same file errors
// and counts: on captures of many batches damaged in every way, pcapng
// with untimed frames, with and without frame heads only, after some
// frames taken by Next, and stopped part way.
func TestNextBatchSameAsNext(t *testing.T) {
	caps := readAheadCaptures(t)
	caps["mixed pcapng"] = filepath.Join(pcapsDir, "mixed.pcapng")
	for name, path := range caps {
		if strings.HasSuffix(path, ".gz") { // a pipe to its decompressor: never read ahead
			continue
		}
		for _, heads := range []bool{false, true} {
			for _, firstByNext := range []int{0, 1, 300} {
				for _, stopAfter := range []int{0, 700} {
					t.Run(fmt.Sprintf("%s/heads=%v/next=%d/stop=%d", name, heads, firstByNext, stopAfter), func(t *testing.T) {
						opts := StreamOptions{CheckCRC: true, Undecoded: true, Untimed: true, Heads: heads}
						one := opts
						one.Workers = 1
						want := batchTranscriptByNext(t, path, one, stopAfter)
						for _, workers := range []int{2, 4} {
							o := opts
							o.Workers = workers
							if got := batchTranscript(t, path, o, firstByNext, stopAfter); got != want {
								t.Errorf("%d workers: NextBatch differs from Next:\n%s", workers, firstDifference(got, want))
							}
						}
					})
				}
			}
		}
	}
}

// batchTranscriptByNext is batchTranscript's record of a stream read on
// one goroutine by Next, stopped at a batch's end as NextBatch is.
func batchTranscriptByNext(t *testing.T, path string, opts StreamOptions, stopAfter int) string {
	t.Helper()
	var b strings.Builder
	opts.OnFileError = func(err error) { fmt.Fprintf(&b, "file: %v\n", err) }
	var stop atomic.Bool
	opts.Stop = &stop
	s, err := OpenStream([]string{path}, opts)
	if err != nil {
		return "open: " + err.Error()
	}
	defer s.Close()
	for n := 1; ; n++ {
		f, _, err := s.Next()
		if err == io.EOF {
			break
		}
		fmt.Fprintf(&b, "%s\n", projectLine(f, err))
		// NextBatch stops at the end of the batch in which the count is
		// reached: batches are batchFrames long until the file's end.
		if stopAfter > 0 && n >= stopAfter && n%batchFrames == 0 {
			stop.Store(true)
		}
	}
	st := s.Stats()
	done, total := s.Progress()
	fmt.Fprintf(&b, "frames %d decode errors %d no time %d file errors %d progress %d of %d\n", st.Frames, st.DecodeErrors, st.NoTime, st.FileErrors, done, total)
	return b.String()
}
