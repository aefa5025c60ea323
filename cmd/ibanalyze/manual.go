package main

import "github.com/ibscope/ibscope/internal/cmddoc"

// manual is what ibanalyze's man pages say beyond its flags (make man).
var manual = cmddoc.Manual{
	ExitStatus: []cmddoc.Item{
		{Tag: "0", Text: "Everything asked was done: every file read to its end, every frame decoded (frames with bad CRCs are findings, not errors), every output written."},
		{Tag: "1", Text: "Something went wrong, said on standard error: a flag refused, a file missing or damaged, a frame that could not be decoded or was cut inside its headers (named with file and frame; the rest is still read and reported), an output that could not be written."},
		{Tag: "130, 143", Text: "SIGINT or SIGTERM ended the command at once (128 + the signal's number), its partial outputs removed. In ipd, flows, credits with --rate, buffer, tick, pfc, hops and cm the first signal only stops the reading: what was read is reported and the status is what it would have been had the input ended there; a second ends the command. In report the first signal stops the analysis running, and report writes no page and exits 1."},
	},
	Environment: []cmddoc.Item{
		{Tag: "GOMAXPROCS", Text: "The most cores --jobs uses by default where it uses more than one (decode's lines, exports but Parquet), as the Go runtime reads it (otherwise every core the process may use); without --jobs, the cores the other processes keep busy are taken off it, down to one: the 1-minute load average, or the tasks running at the start when fewer (/proc/loadavg)."},
		{Tag: "IBANALYZE_CPUPROFILE", Text: "A file to write the run's CPU profile to (pprof), for developers: make pgo merges the profiles of the benchmarked commands into the profile ibanalyze is built with. Unset, no profile is taken."},
	},
	SeeAlso: map[string][]string{
		"ibanalyze":           {"ibcap(1)", "ibsim(1)", "tshark(1)", "perfquery(8)"},
		"ibanalyze decode":    {"ibcap(1)", "tshark(1)", "tcpdump(8)"},
		"ibanalyze ipd":       {"ibcap(1)", "ibsim(1)"},
		"ibanalyze flows":     {"ibcap(1)", "tshark(1)"},
		"ibanalyze credits":   {"ibsim(1)"},
		"ibanalyze buffer":    {"ibsim(1)"},
		"ibanalyze tick":      {"ibsim(1)", "perfquery(8)"},
		"ibanalyze pfc":       {"ibsim(1)", "tshark(1)"},
		"ibanalyze hops":      {"ibsim(1)"},
		"ibanalyze cm":        {"tshark(1)"},
		"ibanalyze correlate": {"ibcap(1)", "perfquery(8)"},
		"ibanalyze export":    {"tshark(1)"},
		"ibanalyze report":    {"ibsim(1)", "chromium(1)"},
		"ibanalyze status":    {"ibcap(1)", "prometheus(1)"},
		"ibanalyze nics":      {"ibcap(1)", "prometheus(1)"},
		"ibanalyze links":     {"ibcap(1)", "prometheus(1)"},
	},
}
