package capfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// TestInterfaceName: the reader gives the first interface's if_name when
// it is a plain name, and nothing for a name with control bytes or none.
func TestInterfaceName(t *testing.T) {
	for _, c := range []struct {
		opts []NgOption
		want string
	}{
		{[]NgOption{NgString(NgOptIfName, "s1/1"), NgString(NgOptIfDescription, "tap")}, "s1/1"},
		{[]NgOption{NgString(NgOptIfName, "bad\x1b[2Jname")}, ""},
		{nil, ""},
	} {
		b := AppendNgSectionHeader(nil, nil)
		b = AppendNgInterface(b, decode.LinkTypeERF, 65535, c.opts)
		path := filepath.Join(t.TempDir(), "n.pcapng")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.InterfaceName(); got != c.want {
			t.Errorf("if_name options %v: %q, want %q", c.opts, got, c.want)
		}
		r.Close()
	}
}
