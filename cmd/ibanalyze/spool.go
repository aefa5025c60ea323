package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/ibscope/ibscope/capfile"
)

// spooled is the temporary file standard input was copied into, and
// temporaries the other temporary files and folders of the run (report's
// folder of pictures): removed at exit (removeTemporaries), on a signal
// too, which ends the process without running its deferred calls.
var (
	spoolMu     sync.Mutex
	spooled     string
	temporaries []string
)

// removeAtExit has removeTemporaries remove path (and what it holds).
func removeAtExit(path string) {
	spoolMu.Lock()
	temporaries = append(temporaries, path)
	spoolMu.Unlock()
}

// spoolStdin lets a command that reads its captures twice (correlate;
// credits inferring the link's byte time) take "-": standard input is
// copied into a temporary file, in $TMPDIR, which stands in for "-" in the
// paths returned. The copy costs disk, not memory; why says on stderr
// what it is for. Paths without "-" come back as they are.
func spoolStdin(paths []string, why string) ([]string, error) {
	i := slices.Index(paths, capfile.Stdin)
	if i < 0 {
		return paths, nil
	}
	f, err := os.CreateTemp("", "ibanalyze-stdin-*")
	if err != nil {
		return nil, fmt.Errorf("copy standard input to a temporary file: %w", err)
	}
	spoolMu.Lock()
	spooled = f.Name()
	spoolMu.Unlock()
	warnf("%s: standard input is copied to %s first (removed at exit)", why, f.Name())
	n, err := io.Copy(f, os.Stdin)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("copy standard input to %s (after %d bytes): %w", f.Name(), n, err)
	}
	out := slices.Clone(paths)
	out[i] = f.Name()
	return out, nil
}

// removeTemporaries removes the copy of standard input, if one was made,
// and the temporaries removeAtExit named.
func removeTemporaries() {
	spoolMu.Lock()
	defer spoolMu.Unlock()
	if spooled != "" {
		os.Remove(spooled)
		spooled = ""
	}
	for _, p := range temporaries {
		os.RemoveAll(p)
	}
	temporaries = nil
}
