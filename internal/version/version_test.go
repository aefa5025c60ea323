package version

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	b := Build{Module: "(devel)", Revision: "0123456789abcdef0123", Modified: true, Time: "2026-11-24T17:00:00Z", GoVersion: "go1.26.8"}
	s := b.String()
	for _, want := range []string{"(devel) revision 0123456789abcdef0123 (modified)", "2026-11-24T17:00:00Z", "go1.26.8 "} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	if s := (Build{Module: "v1.2.3", GoVersion: "go1.26.8"}).String(); !strings.HasPrefix(s, "v1.2.3, go1.26.8 ") {
		t.Errorf("release build: %q", s)
	}
}

// A command built from the clone prints the clone's HEAD for --version.
func TestCommandPrintsRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("needs a git clone: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "ibsim")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "github.com/ibscope/ibscope/cmd/ibsim")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := " revision " + strings.TrimSpace(string(head))
	if !strings.HasPrefix(string(out), "ibsim ") || !strings.Contains(string(out), want) {
		t.Errorf("ibsim --version: %q, want ibsim and %q", out, want)
	}
}

func TestApplication(t *testing.T) {
	if s := Application("ibcap"); !strings.HasPrefix(s, "ibcap (ibscope ") || !strings.HasSuffix(s, ")") {
		t.Errorf("Application: %q", s)
	}
}
