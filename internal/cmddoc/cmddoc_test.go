package cmddoc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// testManual is a Manual with every section filled.
var testManual = Manual{
	Date:        "2026-11-26",
	Source:      "ibscope test",
	ExitStatus:  []Item{{Tag: "0", Text: "all went well"}, {Tag: "1", Text: "something did not"}},
	Environment: []Item{{Tag: "TOOL_ROOT", Text: "a directory read instead of /sys"}},
	SeeAlso:     map[string][]string{"tool sub": {"tshark(1)", "tcpdump(8)"}},
}

// testTree is a command with two subcommands, one hidden.
func testTree() *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "Do things", Run: func(*cobra.Command, []string) {}}
	root.Flags().IntP("snaplen", "s", 0, "keep at most this many bytes")
	root.PersistentFlags().BoolP("quiet", "q", false, "say less")
	sub := &cobra.Command{
		Use:   "sub FILE...",
		Short: "Do one thing",
		Long: `sub does one thing to each FILE.

.files start a paragraph that names \paths, µs and 2×, and a very long path:
/a/very/long/path/that/does/not/fit/on/one/line/of/a/terminal/at/all/file.pcap

  an indented table kept as it is
  .dot   starts a line
and text after it.`,
		Example: "  tool sub x.pcap\n  tool sub -r 100G y.pcap",
		Run:     func(*cobra.Command, []string) {},
	}
	sub.Flags().String("rate", "auto", "link `RATE`")
	sub.Flags().Bool("json", false, "JSON output")
	sub.Flags().Int("jobs", 7, "on `N` cores (default: all)")
	other := &cobra.Command{Use: "other", Short: "Do another thing", Run: func(*cobra.Command, []string) {}}
	hidden := &cobra.Command{Use: "secret", Short: "Not shown", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub, other, hidden)
	return root
}

// A command tree gives one page per command, each titled by its own name,
// with the sections man-pages(7) orders, which man renders, and the three
// completions.
func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	m := testManual
	if err := Generate(testTree(), &m, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"man1/tool.1", "man1/tool-sub.1", "man1/tool-other.1", "completions/bash/tool", "completions/zsh/_tool", "completions/fish/tool.fish"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "man1/tool-secret.1")); err == nil {
		t.Error("a page for the hidden command")
	}
	page, err := os.ReadFile(filepath.Join(dir, "man1/tool-sub.1"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(page)
	if !strings.HasPrefix(src, `.TH TOOL\-SUB 1 "2026-11-26" "ibscope test" "ibscope manual"`+"\n") {
		t.Errorf("title line: %q", strings.SplitN(src, "\n", 2)[0])
	}
	checkPage(t, filepath.Join(dir, "man1/tool-sub.1"))
	for _, want := range []string{
		`tool\-sub \- Do one thing`, `\fBtool sub\fR [\fIOPTIONS\fR] FILE...`,
		`\fB\-\-rate\fR=\fIRATE\fR`, "link RATE (default auto)", "on N cores (default: all)\n", `\fB\-\-quiet\fR`,
		"\\&.files", `\epaths`, `\[u00B5]s and 2\[u00D7]`, `/\:a/\:very`, "\\&  .dot   starts a line",
		".BR \\%tool (1),", ".BR \\%tool\\-other (1),", ".BR \\%tcpdump (8)\n", "TOOL_ROOT",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("tool-sub.1 lacks %q:\n%s", want, src)
		}
	}
	if strings.Contains(src, "secret") {
		t.Error("the hidden command is in SEE ALSO")
	}
	for _, p := range []string{"tool.1", "tool-sub.1", "tool-other.1"} {
		checkManLint(t, filepath.Join(dir, "man1", p))
	}
	checkManRenders(t, filepath.Join(dir, "man1", "tool.1"), "--snaplen")
	checkManRenders(t, filepath.Join(dir, "man1", "tool-sub.1"), "TOOL-SUB(1)")
}

func TestPageDate(t *testing.T) {
	now := time.Date(2026, 11, 26, 23, 0, 0, 0, time.FixedZone("x", -3600))
	for _, c := range []struct{ commit, epoch, want string }{
		{"2026-11-20T10:00:00+02:00", "1700000000", "2026-11-20"},
		{"", "1700000000", "2023-11-14"},
		{"", "", "2026-11-27"},
		{"not a time", "nor this", "2026-11-27"},
	} {
		if got := pageDate(c.commit, c.epoch, now); got != c.want {
			t.Errorf("pageDate(%q, %q) = %s, want %s", c.commit, c.epoch, got, c.want)
		}
	}
}

// pageSections are the sections every page has, in man-pages(7)'s order.
var pageSections = []string{".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS", `.SH "EXIT STATUS"`, ".SH ENVIRONMENT", ".SH EXAMPLES", `.SH "SEE ALSO"`}

// checkPage checks that a page (NAME.1 or NAME-SUB.1) is titled by its
// own name and has every section of pageSections, in order.
func checkPage(t *testing.T, page string) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	name := strings.TrimSuffix(filepath.Base(page), ".1")
	if title := `.TH ` + strings.ToUpper(strings.ReplaceAll(name, "-", `\-`)) + ` 1 `; !strings.HasPrefix(src, title) {
		t.Errorf("%s: title line %q, want it to start %q", page, strings.SplitN(src, "\n", 2)[0], title)
	}
	last := -1
	for _, sh := range pageSections {
		i := strings.Index(src, "\n"+sh+"\n")
		if i < 0 {
			t.Errorf("%s has no %s section", page, sh)
			continue
		}
		if i < last {
			t.Errorf("%s: %s out of order", page, sh)
		}
		last = i
	}
}

// checkManLint fails on anything mandoc -T lint or groff -ww says of a
// page: warnings, style notes, lines that cannot be adjusted.
func checkManLint(t *testing.T, page string) {
	t.Helper()
	mandoc := testenv.MustHaveTool(t, "mandoc")
	if out, err := exec.Command(mandoc, "-T", "lint", "-W", "style", page).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("mandoc -T lint %s: %v\n%s", page, err, out)
	}
	groff := testenv.MustHaveTool(t, "groff")
	if out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", page).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww %s: %v\n%s", page, err, out)
	}
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
// Wireshark extcap entry in DIR/lib/wireshark/extcap. Every page, one per
// command and subcommand, is titled by its own name, has every section
// (EXAMPLES included), lints clean and renders.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every command")
	}
	testenv.MustHaveTool(t, "make")
	prefix := t.TempDir()
	cmd := exec.Command("make", "-C", "../..", "install", "PREFIX="+prefix, "BIN="+filepath.Join(t.TempDir(), "bin"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	// It says where it linked ibcap for Wireshark, and that Wireshark
	// does not look under a PREFIX of the user's choosing.
	if want := "Wireshark extcap: " + filepath.Join(prefix, "lib/wireshark/extcap/ibcap") + " -> " + filepath.Join(prefix, "bin/ibcap") + "; Wireshark does not look there"; !strings.Contains(string(out), want) {
		t.Errorf("make install does not say %q:\n%s", want, out)
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
	checkManRenders(t, filepath.Join(prefix, "share/man/man1/ibcap.1"), "IBSCOPE_LIBIBVERBS")
	checkManRenders(t, filepath.Join(prefix, "share/man/man1/ibanalyze-ipd.1"), "IBANALYZE-IPD(1)")
	checkManRenders(t, filepath.Join(prefix, "share/man/man1/ibanalyze-tick.1"), "perfquery(8)")
	pages, _ := filepath.Glob(filepath.Join(prefix, "share/man/man1/*.1"))
	if len(pages) < 3 {
		t.Errorf("man pages: %q", pages)
	}
	for _, p := range pages {
		checkPage(t, p)
		checkManLint(t, p)
		// man's header line names the page: NAME-SUB(1).
		checkManRenders(t, p, strings.ToUpper(strings.TrimSuffix(filepath.Base(p), ".1"))+"(1)")
	}
	if _, err := exec.LookPath("bash"); err == nil {
		script := "source " + filepath.Join(prefix, "share/bash-completion/completions/ibcap") + " && complete -p ibcap"
		if out, err := exec.Command("bash", "-c", script).CombinedOutput(); err != nil || !strings.Contains(string(out), "ibcap") {
			t.Errorf("bash completion: %v\n%s", err, out)
		}
	}
	t.Run("bash completes flag values", func(t *testing.T) {
		bashCompletes(t, prefix, []string{"ibanalyze", "ipd", "--by", ""}, "flow link qp")
		bashCompletes(t, prefix, []string{"ibanalyze", "flows", "--rate", "HD"}, "HDR")
		bashCompletes(t, prefix, []string{"ibcap", "--format", "pcap"}, "pcap pcapng")
		bashCompletes(t, prefix, []string{"ibsim", "--preset", "incast2015-"}, "incast2015-roce")
		// Devices as -D lists them, and what the device offers (-J).
		bashCompletes(t, prefix, []string{"ibcap", "-i", "an"}, "any")
		bashCompletes(t, prefix, []string{"ibcap", "-i", "lo", "-j", ""}, "host")
	})
	t.Run("fish completes flag values", func(t *testing.T) {
		fishCompletes(t, prefix, "ibanalyze ipd --by ", "flow link qp")
		fishCompletes(t, prefix, "ibcap --time-stamp-precision ", "micro nano")
	})
	t.Run("zsh completes flag values", func(t *testing.T) {
		zshCompletes(t, prefix, "ibanalyze ipd --by ", "flow link qp")
		zshCompletes(t, prefix, "ibcap -Q ", "in inout out")
		zshCompletes(t, prefix, "ibanalyze export --format ", "arrow csv jsonl parquet")
	})
}

// zshTab is a zsh script that types its second argument and TAB into an
// interactive zsh (a pseudo-terminal, zpty) whose completion functions
// are in the folder its first argument names, and prints what zsh shows.
// Ctrl-U and a command whose output it waits for follow the TAB: zsh
// handles the keys in order, so the list is whole once that output came.
const zshTab = `zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='R''EADY> '; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; zstyle ':completion:*' list-prompt ''; setopt nobeep"
out=""
upto() { local end=$((SECONDS+60)) chunk; while ((SECONDS < end)); do if zpty -r -t z chunk; then out+=$chunk; else sleep 0.05; fi; [[ $out == *"$1"* ]] && return 0; done; return 1 }
upto 'READY> ' || { print -u2 "no prompt: $out"; exit 1 }
out=""
zpty -w -n z "$2"$'\t'$'\x15''print END$((6*7))'$'\n'
upto 'END42' || { print -u2 "no list: $out"; exit 1 }
print -r -- "$out"
zpty -d z
`

// zshCompletes asks zsh what it lists for line on TAB, with the installed
// zsh completion and the installed commands on PATH, and checks the
// values (the words before " -- " on each line of the list), in zsh's
// order.
func zshCompletes(t *testing.T, prefix, line, want string) {
	t.Helper()
	zsh := testenv.MustHaveTool(t, "zsh")
	script := filepath.Join(t.TempDir(), "tab.zsh")
	if err := os.WriteFile(script, []byte(zshTab), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(zsh, "-f", script, filepath.Join(prefix, "share/zsh/site-functions"), line)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"), "TERM=dumb")
	out, err := cmd.CombinedOutput()
	var values []string
	for _, l := range strings.FieldsFunc(ansiEscape.ReplaceAllString(string(out), ""), func(r rune) bool { return r == '\r' || r == '\n' }) {
		if before, _, ok := strings.Cut(l, " -- "); ok {
			values = append(values, strings.Fields(before)...)
		}
	}
	if got := strings.Join(values, " "); err != nil || got != want {
		t.Errorf("zsh completion of %q: %v: %q, want %q\n%s", line, err, got, want, out)
	}
}

// ansiEscape is a terminal control sequence, as zsh writes them around
// its list.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]`)

// fishCompletes asks fish what it offers for line (complete -C, as on TAB)
// with the installed fish completion loaded and the installed commands on
// PATH, and checks the values, space-separated in fish's order.
func fishCompletes(t *testing.T, prefix, line, want string) {
	t.Helper()
	fish := testenv.MustHaveTool(t, "fish")
	name, _, _ := strings.Cut(line, " ")
	script := "source " + filepath.Join(prefix, "share/fish/vendor_completions.d", name+".fish") + "; complete -C '" + line + "'"
	cmd := exec.Command(fish, "--no-config", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	var values []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		v, _, _ := strings.Cut(l, "\t")
		values = append(values, v)
	}
	if got := strings.Join(values, " "); err != nil || got != want {
		t.Errorf("fish completion of %q: %v: %q, want %q", line, err, got, want)
	}
}

// bashCompletionLib is bash-completion's library, which the scripts cobra
// writes call into (_get_comp_words_by_ref), as a login shell loads it.
const bashCompletionLib = "/usr/share/bash-completion/bash_completion"

// bashCompletes runs the installed bash completion of words (the last one
// being completed) as bash does on TAB, with the installed commands on PATH,
// and checks what it offers, space-separated.
func bashCompletes(t *testing.T, prefix string, words []string, want string) {
	t.Helper()
	testenv.MustHaveTool(t, "bash")
	if _, err := os.Stat(bashCompletionLib); err != nil {
		testenv.SkipOrFail(t, "needs bash-completion (%v)", err)
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	line := strings.Join(words, " ")
	script := "source " + bashCompletionLib + " && source " + filepath.Join(prefix, "share/bash-completion/completions", words[0]) +
		" && COMP_WORDS=(" + strings.Join(quoted, " ") + ") && COMP_CWORD=" + fmt.Sprint(len(words)-1) +
		" && COMP_LINE='" + line + "' && COMP_POINT=${#COMP_LINE} && __start_" + words[0] + ` 2>/dev/null; echo "${COMPREPLY[*]}"`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if got := strings.TrimSpace(string(out)); err != nil || got != want {
		t.Errorf("bash completion of %q: %v: %q, want %q", line, err, got, want)
	}
}

func TestCompleting(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"ibanalyze"}, false},
		{[]string{"ibanalyze", "ipd", "f.pcap"}, false},
		{[]string{"__complete"}, false}, // the program's own name
		{[]string{"ibanalyze", "__complete", "ipd", "--by", ""}, true},
		{[]string{"ibanalyze", "__completeNoDesc", "ipd", ""}, true},
		{[]string{"ibanalyze", "-q", "__complete", "ipd", ""}, true},
	} {
		if got := Completing(c.args); got != c.want {
			t.Errorf("Completing(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
