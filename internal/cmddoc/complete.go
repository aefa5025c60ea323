package cmddoc

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/decode"
)

// Completers says how to complete flag values, by flag name ("rate"), or
// by command and flag name ("report output") where one command's flag
// takes other values than the flag of that name elsewhere. Register gives
// them to every command of a tree that has such a flag, so that a flag
// added later to another command (--rate, --plot) completes there too.
type Completers map[string]cobra.CompletionFunc

// Register registers, on every command under (and with) root, the
// completer of each flag the command defines itself. It returns the first
// error cobra gives (a completion registered twice).
func Register(root *cobra.Command, c Completers) error {
	var err error
	root.LocalFlags().VisitAll(func(f *pflag.Flag) {
		complete := c[root.Name()+" "+f.Name]
		if complete == nil {
			complete = c[f.Name]
		}
		if complete != nil && err == nil {
			err = root.RegisterFlagCompletionFunc(f.Name, complete)
		}
	})
	if err != nil {
		return err
	}
	for _, sub := range root.Commands() {
		if err := Register(sub, c); err != nil {
			return err
		}
	}
	return nil
}

// Completing reports whether args (os.Args) ask for shell completion:
// cobra's __complete or __completeNoDesc command, which the completion
// scripts run. Only then are the completers needed, so a command registers
// them (Register: a walk over every flag of every command) only then, not
// on each start.
func Completing(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		if a == cobra.ShellCompRequestCmd || a == cobra.ShellCompNoDescRequestCmd {
			return true
		}
	}
	return false
}

// Value is one completion: the value and what it means ("" for nothing).
type Value struct{ Name, Means string }

// Values completes one value out of those values gives (called at
// completion time, so that a list of devices is current), keeping those
// that start with what is typed; no file names.
func Values(values func(cmd *cobra.Command) []Value) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return matching(values(cmd), "", toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// Fixed completes one value out of vs.
func Fixed(vs ...Value) cobra.CompletionFunc {
	return Values(func(*cobra.Command) []Value { return vs })
}

// List completes a comma-separated list of values: the item after the
// last comma, the items before it kept and not offered again (--opcodes
// RC_SEND_ONLY,RC_A<TAB>).
func List(values func(cmd *cobra.Command) []Value) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		i := strings.LastIndexByte(toComplete, ',') + 1
		given := strings.Split(toComplete[:i], ",")
		var left []Value
		for _, v := range values(cmd) {
			if !slices.Contains(given, v.Name) {
				left = append(left, v)
			}
		}
		return matching(left, toComplete[:i], toComplete[i:]), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// FileExt completes names of directories and of files that end in one of
// exts (without the dot: "png").
func FileExt(exts ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// matching is prefix+value for each of vs that starts with typed.
func matching(vs []Value, prefix, typed string) []cobra.Completion {
	var out []cobra.Completion
	for _, v := range vs {
		if strings.HasPrefix(v.Name, typed) {
			if v.Means == "" {
				out = append(out, prefix+v.Name)
			} else {
				out = append(out, cobra.CompletionWithDesc(prefix+v.Name, v.Means))
			}
		}
	}
	return out
}

// Opcodes are the BTH opcodes by name, reserved ones left out, after
// extra (the words a flag takes beside them: data, ack, all).
func Opcodes(extra ...Value) func(*cobra.Command) []Value {
	return func(*cobra.Command) []Value {
		vs := append([]Value(nil), extra...)
		for op := range 256 {
			if name := decode.Opcode(op).String(); !strings.HasPrefix(name, "RESERVED_") {
				vs = append(vs, Value{Name: name})
			}
		}
		return vs
	}
}
