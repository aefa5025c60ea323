// Package cmddoc writes a command's man pages and shell completions from
// its cobra command tree, so they never drift from the flags: each command
// answers "NAME __docs DIR" (make man, make install) by writing
// DIR/man1/*.1 and DIR/completions/{bash/NAME,zsh/_NAME,fish/NAME.fish}.
package cmddoc

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
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
func Generate(root *cobra.Command, dir string) error {
	root.DisableAutoGenTag = true // the same bytes from every build
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
	hdr := &doc.GenManHeader{Title: name, Section: "1", Source: "ibscope", Manual: "ibscope manual"}
	if err := doc.GenManTree(root, hdr, man); err != nil {
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

// Main handles "NAME __docs DIR" for root and exits; it returns when the
// arguments ask for something else.
func Main(root *cobra.Command) {
	dir, ok := Requested(os.Args)
	if !ok {
		return
	}
	if err := Generate(root, dir); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", root.Name(), err)
		os.Exit(1)
	}
	os.Exit(0)
}
