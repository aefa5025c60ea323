package flaghint

import (
	"errors"
	"io"
	"testing"

	"github.com/spf13/pflag"
)

// TestFor: the hint of the flag pflag says is unknown, by long name or by
// letter (in a group of letters too), and none for other errors.
func TestFor(t *testing.T) {
	h := Hints{Long: map[string]string{"erf": "long hint"}, Short: map[byte]string{'x': "short hint"}}
	parse := func(args ...string) error {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.BoolP("verbose", "v", false, "")
		return fs.Parse(args)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--erf"}, "long hint"},
		{[]string{"-x"}, "short hint"},
		{[]string{"-vx"}, "short hint"},
		{[]string{"--x"}, ""},
		{[]string{"-e"}, ""},
		{[]string{"--other"}, ""},
	} {
		err := parse(c.args...)
		if err == nil {
			t.Fatalf("%q: parsed", c.args)
		}
		if got := h.For(err); got != c.want {
			t.Errorf("%q (%v): hint %q, want %q", c.args, err, got, c.want)
		}
		if got := Add(err, h.For(err)).Error(); c.want != "" && got != err.Error()+" ("+c.want+")" || c.want == "" && got != err.Error() {
			t.Errorf("%q: Add gave %q", c.args, got)
		}
	}
	if h.For(errors.New("other")) != "" {
		t.Error("a hint for an error that is not pflag's")
	}
}
