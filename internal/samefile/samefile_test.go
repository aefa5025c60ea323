package samefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pcap"), filepath.Join(dir, "b.pcap")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.pcap")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.pcap")
	if err := os.Link(b, hard); err != nil {
		t.Fatal(err)
	}
	dotted := dir + "/./a.pcap"
	for _, c := range []struct {
		paths []string
		want  string // "" for no error
	}{
		{[]string{a, b}, ""},
		{[]string{a, filepath.Join(dir, "missing")}, ""},
		{[]string{a, a}, a + " is given twice"},
		{[]string{a, b, link}, a + " and " + link + " are the same file"},
		{[]string{b, hard}, b + " and " + hard + " are the same file"},
		{[]string{dotted, b, a}, " are the same file: each input is read once, give it once"},
	} {
		err := Check(c.paths)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.paths, err, c.want)
		}
	}
}
