package correlate

import (
	"encoding/json"
	"testing"
)

// TestAppendJSONString: the fast path for plain text writes what
// encoding/json writes, for plain and escaped strings alike.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "mlx5_0", "RC SEND_ONLY", "a\"b", `a\b`, "<&>", "tab\there", "\x00", "é", "\u2028", "bad\xffutf8", "~\x7f"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want x%s", s, got, want)
		}
	}
}
