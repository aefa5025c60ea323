package main

import "github.com/ibscope/ibscope/internal/cmddoc"

// manual is what ibsim's man page says beyond its flags (make man).
var manual = cmddoc.Manual{
	ExitStatus: []cmddoc.Item{
		{Tag: "0", Text: "The run finished and every output is in the output directory; or --list-presets, --print printed what was asked."},
		{Tag: "1", Text: "The scenario or a flag was refused (naming the key), or a write failed; the run leaves none of its files."},
		{Tag: "130, 143", Text: "SIGINT or SIGTERM stopped the run (128 + the signal's number) and removed its files."},
	},
	EnvironmentNone: "ibsim reads no environment variable of its own.",
	SeeAlso: map[string][]string{
		"ibsim": {"ibanalyze(1)", "ibcap(1)", "perfquery(8)"},
	},
}
