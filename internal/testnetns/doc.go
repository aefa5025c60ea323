// Package testnetns gives a test a network namespace of its own with a veth
// pair in it, deleted when the test ends: frames sent on one end arrive on
// the other and reach no other network. The pair has no IPv6, so that the
// namespace sends nothing of its own (neighbour discovery) at a moment
// that depends on the machine's load. Tests that use it need root and
// iproute2's ip, and skip, saying so, without them (fail under CI: testenv).
package testnetns
