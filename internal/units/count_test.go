package units

import (
	"math"
	"testing"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(1, "packet"), "1 packet"},
		{Count(0, "packet"), "0 packets"},
		{Count(2, "flow"), "2 flows"},
		{Count(-1, "frame"), "-1 frames"},
		{Count(uint64(math.MaxUint64), "byte"), "18446744073709551615 bytes"},
		{Count(int64(math.MinInt64), "byte"), "-9223372036854775808 bytes"},
		{Count(uint32(1), "file"), "1 file"},
		{CountVerb(1, "packet", "was", "were"), "1 packet was"},
		{CountVerb(0, "packet", "was", "were"), "0 packets were"},
		{CountVerb(2, "capture", "is", "are"), "2 captures are"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
