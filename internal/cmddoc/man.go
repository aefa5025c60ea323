package cmddoc

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Manual is what a command's man pages say beyond its cobra tree: the
// sections that are the same on every page of the command (EXIT STATUS,
// ENVIRONMENT) and the pages of other programs each refers to.
type Manual struct {
	// Date goes in each page's title line (YYYY-MM-DD); Main sets the
	// build's commit date, so that every build of a commit writes the
	// same bytes.
	Date string
	// Source names the software and its version in the title line.
	Source string
	// ExitStatus lists the exit codes and what each means.
	ExitStatus []Item
	// Environment lists the variables the command reads; EnvironmentNone
	// is said instead when there are none.
	Environment     []Item
	EnvironmentNone string
	// SeeAlso adds pages ("tshark(1)") to SEE ALSO, by command path
	// ("ibanalyze tick"); the page's parent, subcommands and siblings are
	// there without it.
	SeeAlso map[string][]string
}

// Item is one tagged paragraph of a list: an exit code, a variable.
type Item struct{ Tag, Text string }

// pageName is a command's man page name: its path joined by hyphens
// ("ibanalyze-ipd"), as git's and ip's subcommand pages are named.
func pageName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-")
}

// documented reports whether c gets a page and a place in SEE ALSO.
func documented(c *cobra.Command) bool {
	return c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand()
}

// writeManTree writes NAME.1 for c and each documented command under it.
func writeManTree(c *cobra.Command, m *Manual, dir string) error {
	path := filepath.Join(dir, pageName(c)+".1")
	if err := os.WriteFile(path, []byte(manPage(c, m)), 0o644); err != nil {
		return err
	}
	for _, sub := range c.Commands() {
		if documented(sub) {
			if err := writeManTree(sub, m, dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// manPage is c's man page in man(7) source.
func manPage(c *cobra.Command, m *Manual) string {
	c.InitDefaultHelpFlag()
	var r roff
	name := pageName(c)
	r.request("TH", strings.ToUpper(escape(name)), "1", quote(m.Date), quote(escape(m.Source)), quote("ibscope manual"))

	r.request("SH", "NAME")
	r.wrap(append([]string{name, "-"}, strings.Fields(c.Short)...))

	r.request("SH", "SYNOPSIS")
	r.line(synopsis(c))

	r.request("SH", "DESCRIPTION")
	if c.Long != "" {
		r.text(c.Long)
	} else {
		r.text(c.Short)
	}

	if flags := optionFlags(c); len(flags) > 0 {
		r.request("SH", "OPTIONS")
		for _, f := range flags {
			r.item(optionTag(f), optionText(f))
		}
	}

	if subs := subcommands(c); len(subs) > 0 {
		r.request("SH", "COMMANDS")
		for _, sub := range subs {
			r.item(bold(sub.Name()), sub.Short)
		}
	}

	if len(m.ExitStatus) > 0 {
		r.request("SH", `"EXIT STATUS"`)
		for _, it := range m.ExitStatus {
			r.item(bold(it.Tag), it.Text)
		}
	}

	r.request("SH", "ENVIRONMENT")
	for _, it := range m.Environment {
		r.item(bold(it.Tag), it.Text)
	}
	if len(m.Environment) == 0 {
		r.text(m.EnvironmentNone)
	}

	if c.Example != "" {
		r.request("SH", "EXAMPLES")
		r.verbatim(c.Example)
	}

	if refs := seeAlso(c, m); len(refs) > 0 {
		r.request("SH", `"SEE ALSO"`)
		for i, ref := range refs {
			page, section, _ := strings.Cut(strings.TrimSuffix(ref, ")"), "(")
			sep := ","
			if i == len(refs)-1 {
				sep = ""
			}
			// \% keeps the name whole: no hyphenation inside it.
			r.request("BR", `\%`+escape(page), "("+section+")"+sep)
		}
	}
	return r.String()
}

// quote makes s one argument of a request.
func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\(dq`) + `"` }

// synopsis is the SYNOPSIS line: the command path in bold and the rest of
// its Use line ("FILE [FILE...]"), or COMMAND for a command that only
// holds others.
func synopsis(c *cobra.Command) string {
	s := bold(c.CommandPath())
	_, args, _ := strings.Cut(c.Use, " ")
	if c.HasAvailableSubCommands() && !c.Runnable() {
		return s + " " + italic("COMMAND") + " [" + italic("OPTIONS") + "]"
	}
	if c.HasAvailableFlags() && !strings.HasPrefix(strings.TrimSpace(args), "-") {
		s += " [" + italic("OPTIONS") + "]"
	}
	if args != "" {
		s += " " + escape(args)
	}
	return s
}

// optionFlags are the flags c takes, its own first in the order they were
// defined, then those it inherits (--quiet), hidden ones left out.
func optionFlags(c *cobra.Command) []*pflag.Flag {
	var flags []*pflag.Flag
	add := func(fs *pflag.FlagSet) {
		sorted := fs.SortFlags
		fs.SortFlags = false
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				flags = append(flags, f)
			}
		})
		fs.SortFlags = sorted
	}
	add(c.NonInheritedFlags())
	add(c.InheritedFlags())
	return flags
}

// optionTag is a flag's tag: "-i, --interface=string".
func optionTag(f *pflag.Flag) string {
	tag := bold("--" + f.Name)
	if f.Shorthand != "" {
		tag = bold("-"+f.Shorthand) + ", " + tag
	}
	if arg, _ := pflag.UnquoteUsage(f); arg != "" {
		tag += "=" + italic(arg)
	}
	return tag
}

// optionText is a flag's usage and its default, unless that is the zero
// value or the usage says what the default is: a default that depends on
// the machine (--jobs: GOMAXPROCS) is said in words, and the page must not
// carry the value of the machine that wrote it.
func optionText(f *pflag.Flag) string {
	_, usage := pflag.UnquoteUsage(f)
	switch {
	case strings.Contains(usage, "default"):
	case f.DefValue == "", f.DefValue == "0", f.DefValue == "0s", f.DefValue == "false", f.DefValue == "[]", f.DefValue == "<nil>":
	default:
		usage += " (default " + f.DefValue + ")"
	}
	return usage
}

// subcommands are the documented commands under c.
func subcommands(c *cobra.Command) []*cobra.Command {
	var subs []*cobra.Command
	for _, sub := range c.Commands() {
		if documented(sub) {
			subs = append(subs, sub)
		}
	}
	return subs
}

// seeAlso lists the pages c's page refers to: its parent, its
// subcommands, its siblings, then the Manual's for its path, each once.
func seeAlso(c *cobra.Command, m *Manual) []string {
	var refs []string
	seen := map[string]bool{}
	add := func(ref string) {
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	if p := c.Parent(); p != nil {
		add(pageName(p) + "(1)")
		for _, sib := range subcommands(p) {
			if sib != c {
				add(pageName(sib) + "(1)")
			}
		}
	}
	for _, sub := range subcommands(c) {
		add(pageName(sub) + "(1)")
	}
	for _, ref := range m.SeeAlso[c.CommandPath()] {
		add(ref)
	}
	return refs
}
