// Command gen writes ibscope's Grafana dashboard (package dashboard) as
// JSON to import: make dashboard runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ibscope/ibscope/dashboard"
	"github.com/ibscope/ibscope/internal/outfile"
)

func main() {
	out := flag.String("o", "", "write the dashboard to this file (default: standard output)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "gen: unexpected argument %q; usage: gen [-o FILE]\n", flag.Arg(0))
		os.Exit(2)
	}
	b, err := dashboard.JSON()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
	} else {
		err = write(*out, b)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gen: write the dashboard: %v\n", err)
		os.Exit(1)
	}
}

// write writes the dashboard by the output-file rule: complete or not at
// all, never through a symbolic link.
func write(path string, b []byte) error {
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Commit()
}
