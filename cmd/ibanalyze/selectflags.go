package main

import (
	"errors"
	"fmt"

	"github.com/ibscope/ibscope/filter"
	"github.com/spf13/pflag"
)

// selected is the running command's selection flags (one command runs in
// a process, as with --quiet).
var selected selectFlags

// selectFlags are the selection every command that reads packets takes
// (package filter): --select/-Y EXPR, --from, --to and -c.
type selectFlags struct {
	expr, from, to string
	count          int
}

// selectHelp is the paragraph of each command's help on the selection.
const selectHelp = `--select (-Y) EXPR keeps the packets EXPR selects, before the analysis:
  qp == 0x11 && opcode == "RC_SEND_ONLY"   src == 10.0.0.0/24 || pcp == 3
  psn > 100 and not fecn                   udp_src_port in {49152, 49153}
fields by decode --json's names (reth.va or reth_va), ==, !=, <, <=, >, >=,
in {...}, &&, ||, !, and, or, not, parentheses. --from and --to bound the
packet times (absolute, or +DURATION after the first packet), -c N stops
after N packets selected.
`

// addSelectFlags adds the selection flags, and -j, which every command
// that reads packets takes too; count is false for a command whose -c
// means something else.
func addSelectFlags(f *pflag.FlagSet, p *selectFlags, count bool) {
	addJobsFlag(f)
	f.StringVarP(&p.expr, "select", "Y", "", "keep the packets `EXPR` selects (fields by decode --json's names; see above)")
	f.StringVar(&p.from, "from", "", "keep packets stamped at or after `TIME`: "+filter.TimeSyntax)
	f.StringVar(&p.to, "to", "", "keep packets stamped before `TIME` (as --from)")
	if count {
		f.IntVarP(&p.count, "count", "c", 0, "stop after `N` packets selected (0: all)")
	}
}

// selection compiles the flags once; nil when they select everything.
func (p *selectFlags) selection() (*filter.Selection, error) {
	s := &filter.Selection{Count: p.count}
	var err error
	if p.count < 0 {
		return nil, fmt.Errorf("-c %d: want 0 (all) or more", p.count)
	}
	if p.expr != "" {
		if s.Filter, err = filter.Compile(p.expr); err != nil {
			var se *filter.SyntaxError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("--select: %w\n%s", err, se.Caret())
			}
			return nil, fmt.Errorf("--select: %w", err)
		}
	}
	if p.from != "" {
		if s.From, err = filter.ParseTime(p.from); err != nil {
			return nil, fmt.Errorf("--from %w", err)
		}
	}
	if p.to != "" {
		if s.To, err = filter.ParseTime(p.to); err != nil {
			return nil, fmt.Errorf("--to %w", err)
		}
	}
	if !s.Active() {
		return nil, nil
	}
	return s, nil
}
