package main

import (
	"github.com/spf13/cobra"

	"github.com/ibscope/ibscope/internal/cmddoc"
	"github.com/ibscope/ibscope/sim"
)

// registerCompletions completes ibsim's scenario file (YAML or JSON), its
// --preset names and its --out directory (ibsim __complete --preset "").
func registerCompletions() error {
	rootCmd.ValidArgsFunction = cmddoc.FileExt("yaml", "yml", "json")
	return cmddoc.Register(rootCmd, cmddoc.Completers{
		"preset": cmddoc.Values(presetValues),
		"out": func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
	})
}

// presetValues are the built-in scenarios.
func presetValues(*cobra.Command) []cmddoc.Value {
	var vs []cmddoc.Value
	for _, name := range sim.PresetNames() {
		vs = append(vs, cmddoc.Value{Name: name})
	}
	return vs
}
