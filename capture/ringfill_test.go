package capture

import (
	"errors"
	"testing"

	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testenv"
)

// The AF_PACKET ring's fill level counts the frames the kernel put in it
// that Next has not returned: all of a burst nobody read, fewer as they
// are read, none once drained.
func TestAFPacketRingFilled(t *testing.T) {
	ns := newVethNS(t)
	src := openInNS(t, ns, &Config{PollTimeoutMs: 20})
	var frames [][]byte
	for i := range 50 {
		frames = append(frames, rocev2Frame(opSendOnly, 0x11, uint32(i), 200, false, false))
	}
	tx := ns.OpenTx(t)
	defer tx.Close()
	before := ns.RxDropped(t)
	if _, err := tx.Send(frames, len(frames), 100_000); err != nil {
		t.Fatal(err)
	}
	want := uint64(len(frames) - (ns.RxDropped(t) - before))
	filled := func() Stats {
		t.Helper()
		st, err := src.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// The frames cross the veth pair in a softirq: wait for the last.
	testenv.Poll(0, func() bool { return filled().RingFilled >= want })
	if st := filled(); st.RingFilled != want || st.RingSlots != 0 {
		t.Fatalf("before reading: ring filled %d of %d slots, want %d of 0 (slots unknown)", st.RingFilled, st.RingSlots, want)
	}
	for range 10 {
		if _, err := src.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if st := filled(); st.RingFilled != want-10 {
		t.Errorf("after 10 frames read: ring filled %d, want %d", st.RingFilled, want-10)
	}
	for {
		if _, err := src.Next(); errors.Is(err, ErrTimeout) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if st := filled(); st.RingFilled != 0 {
		t.Errorf("drained: ring filled %d, want 0", st.RingFilled)
	}
}

// The verbs ring's fill level counts the receive buffers the device filled
// that are not posted again, of all the ring's buffers: at least the one
// just returned, none once the capture is idle and every buffer went back.
func TestVerbsRingFilled(t *testing.T) {
	feed, _, _ := verbsFeedGap(t, 200, false, 1000)
	env := fakeverbs.New(t, fakeverbs.Config{Feed: feed})
	src, err := openFake(t, env, "fake_1", Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Next(); err != nil {
		t.Fatal(err)
	}
	st, _ := src.Stats()
	if st.RingSlots < verbsMinSlots || st.RingFilled < 1 || st.RingFilled > st.RingSlots {
		t.Errorf("after a packet: ring filled %d of %d slots, want 1 to all of at least %d", st.RingFilled, st.RingSlots, verbsMinSlots)
	}
	if _, err := drainVerbs(t, src); err != nil {
		t.Fatal(err)
	}
	if st, _ := src.Stats(); st.RingFilled != 0 {
		t.Errorf("idle: ring filled %d of %d slots, want 0", st.RingFilled, st.RingSlots)
	}
	env.NoViolations(t)
}
