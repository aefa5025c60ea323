package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ibscope/ibscope/internal/termtext"
)

// Dir is an output directory that confines what is written into it: the
// names given are local (no absolute path, no ".."), and every file and
// directory is opened through an os.Root, so no symbolic link leads out.
// Directories it makes are removed again by Abort when left empty.
type Dir struct {
	path string
	root *os.Root
	made []string // directories this Dir created, as paths, parents first
}

// OpenDir makes path (and its missing parents) if needed and opens it as
// an output directory.
func OpenDir(path string) (*Dir, error) {
	d := &Dir{path: path}
	made, err := mkdirPending(func() ([]string, error) {
		var missing []string
		for p := filepath.Clean(path); ; p = filepath.Dir(p) {
			if _, err := os.Lstat(p); err == nil || p == filepath.Dir(p) {
				break
			}
			missing = append([]string{p}, missing...)
		}
		// Made one by one, so that what exists is what is registered.
		for i, p := range missing {
			if err := os.Mkdir(p, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
				return missing[:i], err
			}
		}
		return missing, nil
	})
	d.made = made
	if err != nil {
		d.Abort()
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		d.Abort()
		return nil, fmt.Errorf("create %s: not a directory", path)
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		d.Abort()
		return nil, fmt.Errorf("open %s: %w", path, unwrapPath(err))
	}
	d.root = root
	return d, nil
}

// CheckName refuses a name that would leave the directory: absolute, with
// "..", or empty.
func CheckName(name string) error {
	if !filepath.IsLocal(name) {
		return fmt.Errorf("%q: want a name inside the output directory (no absolute path, no \"..\")", name)
	}
	if !termtext.IsPlain(name) {
		// A NUL fails only when the file is made, after the run; a
		// control or bidirectional character shows another name than the
		// file's on the terminal that lists it.
		return fmt.Errorf("%q: want a name of printable characters (no control, format or bidirectional characters)", name)
	}
	if b := filepath.Base(name); strings.HasPrefix(b, ".") && strings.HasSuffix(b, ".tmp") {
		return fmt.Errorf("%q: names like .NAME.tmp are for temporary files", name)
	}
	return nil
}

// MkdirAll makes the directory name, and its missing parents, inside d.
func (d *Dir) MkdirAll(name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Join(d.path, name), err)
	}
	parts := strings.Split(filepath.Clean(name), string(filepath.Separator))
	for i := range parts {
		rel := filepath.Join(parts[:i+1]...)
		made, err := mkdirPending(func() ([]string, error) {
			if err := d.root.Mkdir(rel, 0o777); err != nil {
				return nil, err
			}
			return []string{filepath.Join(d.path, rel)}, nil
		})
		d.made = append(d.made, made...)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", filepath.Join(d.path, rel), unwrapPath(err))
		}
		if fi, err := d.root.Stat(rel); err != nil || !fi.IsDir() {
			return fmt.Errorf("create %s: exists and is not a directory", filepath.Join(d.path, rel))
		}
	}
	return nil
}

// Create starts writing the file name inside d by the package's rule (see
// Create), making its directory if needed.
func (d *Dir) Create(name string) (*File, error) {
	path := filepath.Join(d.path, name)
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if dir := filepath.Dir(name); dir != "." {
		if err := d.MkdirAll(dir); err != nil {
			return nil, err
		}
	}
	return create(d.root, filepath.Clean(name), path)
}

// Keep ends a successful run: the directories made stay.
func (d *Dir) Keep() {
	dropPendingDirs(d.made)
	d.made = nil
	d.close()
}

// Abort ends a failed run: the directories it made are removed, children
// first, where they are empty (files committed stay, and keep theirs).
func (d *Dir) Abort() {
	for i := len(d.made) - 1; i >= 0; i-- {
		_ = os.Remove(d.made[i])
	}
	dropPendingDirs(d.made)
	d.made = nil
	d.close()
}

func (d *Dir) close() {
	if d.root != nil {
		d.root.Close()
		d.root = nil
	}
}
