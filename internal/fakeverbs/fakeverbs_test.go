package fakeverbs

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
)

// The double holds a caller to the verbs contract: c/contract_check.c
// drives it through verbs.h's own inline functions, correctly ("good": no
// violation, the frames fed arrive) and breaking one rule per scenario,
// which must fail as rdma-core fails (the driver checks the errno) and
// leave a violation in the log naming the rule.
func TestContract(t *testing.T) {
	lib := Library(t)
	driver := filepath.Join(t.TempDir(), "contract_check")
	out, err := exec.Command("gcc", "-O1", "-Wall", "-Werror", "-o", driver, "c/contract_check.c", lib,
		"-Wl,-rpath,"+filepath.Dir(lib)).CombinedOutput()
	if err != nil {
		t.Fatalf("build the driver: %v\n%s", err, out)
	}
	feed := testcap.Write(t, "feed.pcap", false, testcap.Stream(3, 1, 2, 0x11, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 }))
	for _, c := range []struct{ scenario, violation string }{
		{"good", ""},
		{"qp_type", "needs IBV_QPT_RAW_PACKET"},
		{"state_order", "RESET, INIT, RTR in order"},
		{"outside_mr", "outside its MR"},
		{"repost", "posted again before its completion"},
		{"pd_busy", "ibv_dealloc_pd with 1 QPs and 1 MRs"},
		{"flow_port", "ibv_create_flow on port 2"},
		{"flow_type", "needs IBV_FLOW_ATTR_SNIFFER"},
		{"ts_without_flag", "without IBV_WC_EX_WITH_COMPLETION_TIMESTAMP"},
		{"double_start", "ibv_start_poll again before ibv_end_poll"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			env := New(t, Config{Feed: feed})
			cmd := exec.Command(driver, c.scenario)
			cmd.Env = env.Environ()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			log := env.ReadLog(t)
			if c.violation == "" {
				if len(log.Violations) != 0 || log.Opens != 1 || log.Closes != 1 {
					t.Errorf("log %q", log.Lines)
				}
				return
			}
			if len(log.Violations) == 0 {
				t.Errorf("no violation logged, want %q", c.violation)
			}
			for _, v := range log.Violations {
				if !strings.Contains(v, c.violation) {
					t.Errorf("violation %q, want only %q", v, c.violation)
				}
			}
		})
	}
}
