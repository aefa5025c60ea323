package cmddoc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/spf13/cobra"
)

func TestRequested(t *testing.T) {
	if dir, ok := Requested([]string{"ibcap", Arg, "/tmp/d"}); !ok || dir != "/tmp/d" {
		t.Errorf("got %q, %v", dir, ok)
	}
	for _, args := range [][]string{{"ibcap"}, {"ibcap", Arg}, {"ibcap", "udp", "port"}, {"ibcap", Arg, ""}} {
		if _, ok := Requested(args); ok {
			t.Errorf("%q taken for a request", args)
		}
	}
}

// A command tree gives one page per command, which man renders, and the
// three completions.
func TestGenerate(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "Do things", Run: func(*cobra.Command, []string) {}}
	root.Flags().IntP("snaplen", "s", 0, "keep at most this many bytes")
	sub := &cobra.Command{Use: "sub", Short: "Do one thing", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub)
	dir := t.TempDir()
	if err := Generate(root, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"man1/tool.1", "man1/tool-sub.1", "completions/bash/tool", "completions/zsh/_tool", "completions/fish/tool.fish"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	checkManRenders(t, filepath.Join(dir, "man1", "tool.1"), "--snaplen")
}

// checkManRenders renders a page with man -l when man is installed.
func checkManRenders(t *testing.T, page, says string) {
	t.Helper()
	if _, err := exec.LookPath("man"); err != nil {
		t.Logf("no man command: %s not rendered", page)
		return
	}
	cmd := exec.Command("man", "-l", page)
	cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), says) {
		t.Errorf("man -l %s: %v\n%s", page, err, out)
	}
}

// make install PREFIX=DIR puts the commands, their man pages and
// completions where man, bash, zsh and fish look under DIR, and ibcap's
// Wireshark extcap entry in DIR/lib/wireshark/extcap.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every command")
	}
	testenv.MustHaveTool(t, "make")
	prefix := t.TempDir()
	cmd := exec.Command("make", "-C", "../..", "install", "PREFIX="+prefix, "BIN="+filepath.Join(t.TempDir(), "bin"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, c := range []string{"ibcap", "ibanalyze", "ibsim"} {
		for _, f := range []string{"bin/" + c, "share/man/man1/" + c + ".1", "share/bash-completion/completions/" + c,
			"share/zsh/site-functions/_" + c, "share/fish/vendor_completions.d/" + c + ".fish"} {
			if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
				t.Error(err)
			}
		}
	}
	// Wireshark's extcap entry: under PREFIX, as it is not a system install.
	if target, err := os.Readlink(filepath.Join(prefix, "lib/wireshark/extcap/ibcap")); err != nil || target != filepath.Join(prefix, "bin/ibcap") {
		t.Errorf("extcap entry: %q, %v; want a link to %s", target, err, filepath.Join(prefix, "bin/ibcap"))
	}
	checkManRenders(t, filepath.Join(prefix, "share/man/man1/ibcap.1"), "pcap-filter(7)")
	checkManRenders(t, filepath.Join(prefix, "share/man/man1/ibanalyze-ipd.1"), "ibanalyze")
	if _, err := exec.LookPath("bash"); err == nil {
		script := "source " + filepath.Join(prefix, "share/bash-completion/completions/ibcap") + " && complete -p ibcap"
		if out, err := exec.Command("bash", "-c", script).CombinedOutput(); err != nil || !strings.Contains(string(out), "ibcap") {
			t.Errorf("bash completion: %v\n%s", err, out)
		}
	}
}
