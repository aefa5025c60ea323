// Command gen writes ibscope's Grafana dashboard (package dashboard) as
// JSON to import: make dashboard runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ibscope/ibscope/dashboard"
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
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gen: write the dashboard: %v\n", err)
		os.Exit(1)
	}
}
