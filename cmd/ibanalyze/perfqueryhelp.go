package main

import (
	"strings"

	"github.com/ibscope/ibscope/telemetry"
)

// perfqueryHelp is the paragraph of correlate's and tick's help on saving
// perfquery output so that its samples have times.
var perfqueryHelp = `perfquery text is plain or -x output, one or many
snapshots, each stamped by a date line before it, as a loop saves them:

  while sleep 1; do date; perfquery -x; done > perfquery.txt

The date line may be in any of these forms:

  ` + strings.ReplaceAll(telemetry.PerfqueryTimeForms, "\n", "\n  ")
