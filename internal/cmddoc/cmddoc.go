// Package cmddoc writes a command's man pages and shell completions from
// its cobra command tree, so they never drift from the flags: each command
// answers "NAME __docs DIR" (make man, make install) by writing
// DIR/man1/*.1 (one page per command and subcommand, in man(7) source
// written here) and DIR/completions/{bash/NAME,zsh/_NAME,fish/NAME.fish}.
// The completion scripts ask the command itself (cobra's __complete) for
// flag values, which each command gives through Register.
package cmddoc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibscope/ibscope/internal/version"
)

// Arg is the hidden first argument that asks for the documents, in the
// style of cobra's own __complete.
const Arg = "__docs"

// Requested returns the directory when args (os.Args) are "NAME __docs DIR".
func Requested(args []string) (dir string, ok bool) {
	if len(args) == 3 && args[1] == Arg && args[2] != "" {
		return args[2], true
	}
	return "", false
}

// Generate writes root's man pages (one per command, section 1, named
// NAME.1 and NAME-SUB.1) and its bash, zsh and fish completions under dir.
func Generate(root *cobra.Command, m *Manual, dir string) error {
	man := filepath.Join(dir, "man1")
	name := root.Name()
	files := map[string]func(string) error{
		filepath.Join(dir, "completions", "bash", name):         func(p string) error { return root.GenBashCompletionFileV2(p, true) },
		filepath.Join(dir, "completions", "zsh", "_"+name):      root.GenZshCompletionFile,
		filepath.Join(dir, "completions", "fish", name+".fish"): func(p string) error { return root.GenFishCompletionFile(p, true) },
	}
	if err := os.MkdirAll(man, 0o755); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	if err := writeManTree(root, m, man); err != nil {
		return fmt.Errorf("man pages in %s: %w", man, err)
	}
	for path, gen := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("completion: %w", err)
		}
		if err := gen(path); err != nil {
			return fmt.Errorf("completion %s: %w", path, err)
		}
	}
	return nil
}

// pageDate is the date a page carries (YYYY-MM-DD, UTC): the commit's
// (commitTime, RFC 3339), else SOURCE_DATE_EPOCH's (seconds, as
// reproducible builds set it), else now's, for a build without either.
func pageDate(commitTime, sourceDateEpoch string, now time.Time) string {
	if t, err := time.Parse(time.RFC3339, commitTime); err == nil {
		return t.UTC().Format(time.DateOnly)
	}
	if s, err := strconv.ParseInt(sourceDateEpoch, 10, 64); err == nil {
		return time.Unix(s, 0).UTC().Format(time.DateOnly)
	}
	return now.UTC().Format(time.DateOnly)
}

// Main handles "NAME __docs DIR" for root and exits; it returns when the
// arguments ask for something else. The pages are dated by the build's
// commit (pageDate) and name the build's module version.
func Main(root *cobra.Command, m Manual) {
	dir, ok := Requested(os.Args)
	if !ok {
		return
	}
	b := version.Read()
	m.Date = pageDate(b.Time, os.Getenv("SOURCE_DATE_EPOCH"), time.Now())
	m.Source = "ibscope " + b.Module
	if strings.HasPrefix(b.Module, "(") && len(b.Revision) >= 12 { // (devel): the commit says more
		m.Source = "ibscope " + b.Revision[:12]
	}
	if err := Generate(root, &m, dir); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", root.Name(), err)
		os.Exit(1)
	}
	os.Exit(0)
}
