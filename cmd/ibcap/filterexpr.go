package main

import (
	"errors"
	"fmt"
	"strings"
)

// filterExpression takes the capture filter from -f or, as tcpdump does,
// from the arguments after the flags ("ibcap -i eth2 udp port 4791").
func filterExpression(f *flags, args []string) error {
	if len(args) > 0 {
		if f.filterExpr != "" {
			return fmt.Errorf("a filter expression twice: -f %q and %q after the flags; give one", f.filterExpr, strings.Join(args, " "))
		}
		f.filterExpr = strings.Join(args, " ")
	}
	if f.filterExpr != "" && strings.TrimSpace(f.filterExpr) == "" {
		return errors.New("-f: empty filter expression")
	}
	if f.filterExpr != "" && f.all {
		return fmt.Errorf("--all and the filter expression %q: the expression already replaces the RoCE-only default; drop --all", f.filterExpr)
	}
	return nil
}
