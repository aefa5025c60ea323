package decode

import (
	"slices"
	"testing"
)

func TestParseOpcode(t *testing.T) {
	for s, want := range map[string]Opcode{"RC_SEND_ONLY": 0x04, "rc_rdma_write_middle": 0x07, " 0x0a ": 0x0A,
		"17": 0x11, "CNP": 0x81, "vendor_0xC0": 0xC0, "reserved_0x18": 0x18, "0x19": 0x19} {
		if got, err := ParseOpcode(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, bad := range []string{"", "256", "-1", "RC_SEND", "0x"} {
		if _, err := ParseOpcode(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseOpcodes(t *testing.T) {
	if ops, err := ParseOpcodes(" "); ops != nil || err != nil {
		t.Errorf("empty list: %v, %v; want nil, nil", ops, err)
	}
	ops, err := ParseOpcodes("ack, RC_SEND_ONLY,0x11,4")
	if err != nil {
		t.Fatal(err)
	}
	// Every ACKNOWLEDGE and ATOMIC_ACKNOWLEDGE, SEND_ONLY once, sorted.
	acks := 0
	for op := range 256 {
		if Opcode(op).IsAck() {
			acks++
		}
	}
	if !slices.Contains(ops, 0x04) || !slices.IsSorted(ops) || len(ops) != 1+acks || acks < 4 {
		t.Errorf("ack,RC_SEND_ONLY,0x11,4: %v", ops)
	}
	for _, op := range ops {
		if op != 0x04 && !op.IsAck() {
			t.Errorf("%v is neither an ACK nor RC_SEND_ONLY", op)
		}
	}
	all, _ := ParseOpcodes("all")
	data, _ := ParseOpcodes("DATA")
	if len(all) != 256 || len(data) == 0 || len(data) >= 256 {
		t.Errorf("all: %d opcodes, data: %d", len(all), len(data))
	}
	if _, err := ParseOpcodes("data,bogus"); err == nil {
		t.Error("bogus accepted")
	}
}
