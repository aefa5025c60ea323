package capture

import (
	"testing"

	"github.com/ibscope/ibscope/internal/testnetns"
)

// newVethNS creates a network namespace of the test's own with veth pair
// vsend (macA) / vcap (macB), both up, deleted when the test ends.
func newVethNS(t testing.TB) *testnetns.NS {
	t.Helper()
	return testnetns.New(t, macA, macB)
}
