package outfile

import (
	"errors"
	"os"
	"sync"
)

// pending holds the temporary files not yet committed or aborted, and the
// directories Dirs under way made (parents first), for RemovePending.
var pending struct {
	sync.Mutex
	files   map[string]bool
	dirs    []string
	stopped bool
}

// errStopped is what Create returns once RemovePending has run.
var errStopped = errors.New("interrupted")

// createPending runs create, which makes the temporary file tmp, and
// registers tmp for RemovePending, both under the lock: a signal handler's
// RemovePending either runs first (and create is not called) or sees tmp.
func createPending(tmp string, create func() error) error {
	pending.Lock()
	defer pending.Unlock()
	if pending.stopped {
		return errStopped
	}
	if err := create(); err != nil {
		return err
	}
	if pending.files == nil {
		pending.files = map[string]bool{}
	}
	pending.files[tmp] = true
	return nil
}

func dropPending(tmp string) {
	pending.Lock()
	delete(pending.files, tmp)
	pending.Unlock()
}

// mkdirPending runs mkdir, which returns the directories it made (parents
// first), and registers them for RemovePending, under the lock as
// createPending does.
func mkdirPending(mkdir func() ([]string, error)) ([]string, error) {
	pending.Lock()
	defer pending.Unlock()
	if pending.stopped {
		return nil, errStopped
	}
	made, err := mkdir()
	pending.dirs = append(pending.dirs, made...)
	return made, err
}

// dropPendingDirs forgets dirs once their Dir has been kept or cleaned up.
func dropPendingDirs(dirs []string) {
	drop := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		drop[d] = true
	}
	pending.Lock()
	defer pending.Unlock()
	kept := pending.dirs[:0]
	for _, d := range pending.dirs {
		if !drop[d] {
			kept = append(kept, d)
		}
	}
	pending.dirs = kept
}

// RemovePending removes every temporary file not yet committed, and the
// directories Dirs under way made that this leaves empty, and makes later
// Create calls fail; it returns how many files it removed. A command
// stopped by a signal calls it before exiting, so that no partial output
// is left behind even under a hidden name; only such a signal handler
// calls it, which AwaitSignalExit relies on. Committed files stay: they
// are complete.
func RemovePending() (files int) {
	pending.Lock()
	defer pending.Unlock()
	pending.stopped = true
	for tmp := range pending.files {
		// Writers may still hold the file open; unlinking it is enough.
		if os.Remove(tmp) == nil {
			files++
		}
	}
	pending.files = nil
	// Children before parents; os.Remove leaves a directory that holds
	// anything else.
	for i := len(pending.dirs) - 1; i >= 0; i-- {
		_ = os.Remove(pending.dirs[i])
	}
	pending.dirs = nil
	return files
}
