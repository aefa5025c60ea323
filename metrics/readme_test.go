package metrics

import (
	"os"
	"strings"
	"testing"
)

// The README's table says of ibscope_flows what its help says: flows seen
// up to the analysis bound, the rest counted as one (it said "flows seen",
// where the count stops growing at the bound).
func TestREADMEFlowsAgreesWithHelp(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| `ibscope_flows` |") {
			row = l
		}
	}
	help := descFlowsTracked.String()
	if !strings.Contains(help, "past the analysis bound count as one") {
		t.Fatalf("the help changed: %s", help)
	}
	for _, want := range []string{"up to the analysis bound", "40,000", "past it count as one"} {
		if !strings.Contains(row, want) {
			t.Errorf("README row %q lacks %q", row, want)
		}
	}
	if maxAnalyzedFlows != 40_000 {
		t.Errorf("the bound is %d: the README says 40,000", maxAnalyzedFlows)
	}
}
