package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runStdin runs ibanalyze with the file at in as its standard input.
func runStdin(t *testing.T, in string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(ibanalyzeBin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, &out, &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// TestStdinEveryCommand: "-" reads the capture from standard input, and
// every command reports on it as on the file (`cat x.pcap | ibanalyze flows -`).
// Those that read their capture twice (credits without --rate, which
// infers the byte time first; correlate) read a temporary copy of it.
func TestStdinEveryCommand(t *testing.T) {
	dir := simIncast(t)
	s1, s2, r := filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap"), filepath.Join(dir, "r.pcap")
	tel := filepath.Join(dir, "perfquery.txt")
	for _, c := range []struct {
		in   string
		args []string // "-" is the capture
		file string   // how the JSON names the capture given as a file
	}{
		{s1, []string{"flows", "--json", "-"}, s1},
		{s1, []string{"ipd", "--json", "--phases", "-"}, s1},
		{s1, []string{"ipd", "--json", "--by", "link", s2, "-"}, s1},
		{s1, []string{"decode", "--json", "-"}, s1},
		{s1, []string{"credits", "--json", "--rate", "QDR", "-"}, s1},
		{s1, []string{"tick", "--json", "--rate", "QDR", "--telemetry", tel, "-"}, s1},
		{r, []string{"buffer", "--json", "--series", s1, s2, "-"}, r},
		{s1, []string{"export", "--json", "-o", filepath.Join(t.TempDir(), "p.parquet"), "-"}, s1},
	} {
		name := strings.Join(c.args, " ")
		out, errOut, code := runStdin(t, c.in, c.args...)
		if code != 0 {
			t.Errorf("%s < %s: exit %d: %s", name, filepath.Base(c.in), code, errOut)
			continue
		}
		fileArgs := make([]string, len(c.args))
		for i, a := range c.args {
			fileArgs[i] = a
			if a == "-" {
				fileArgs[i] = c.in
			}
		}
		want := runOK(t, fileArgs...)
		if c.args[0] == "export" { // the output's name, rows and files are the same; the time taken is not
			out, want = strings.Split(out, `"seconds"`)[0], strings.Split(want, `"seconds"`)[0]
		}
		if want = strings.ReplaceAll(want, c.file, "stdin"); out != want {
			t.Errorf("%s: standard input gives another report than the file:\n%.600s\nwant\n%.600s", name, out, want)
		}
	}

	// Those that read their capture twice copy standard input to a temporary
	// file first, removed at exit: the same report as the file's.
	tmp := t.TempDir()
	twice := []struct {
		args []string
		drop string // the JSON key that names the capture or output, left out of the comparison
	}{
		{[]string{"credits", "--json", "-"}, `"file"`},
		{[]string{"correlate", "--json", "--telemetry", tel, "-o", filepath.Join(t.TempDir(), "c.parquet"), "-"}, `"seconds"`},
	}
	for _, c := range twice {
		f, err := os.Open(s1)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(ibanalyzeBin, c.args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		var out, errOut bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = f, &out, &errOut
		err = cmd.Run()
		f.Close()
		if err != nil || !strings.Contains(errOut.String(), "standard input is copied to "+tmp) {
			t.Errorf("%s: %v: %s", c.args[0], err, errOut.String())
			continue
		}
		fileArgs := slices.Clone(c.args)
		fileArgs[len(fileArgs)-1] = s1
		want := runOK(t, fileArgs...)
		if got, want := withoutKeyLines(out.String(), c.drop), withoutKeyLines(want, c.drop); got != want {
			t.Errorf("%s -: another report than the file's:\n%.600s\nwant\n%.600s", c.args[0], got, want)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the copies of standard input were left in TMPDIR: %v", left)
	}
	for _, args := range [][]string{{"flows", "-", "-"}, {"ipd", "--compare", "-", "-"}, {"buffer", "-", "-"}} {
		if _, errOut, code := runStdin(t, s1, args...); code == 0 || !strings.Contains(errOut, "- (standard input) is given twice") {
			t.Errorf("%s: exit %d, %s", strings.Join(args, " "), code, errOut)
		}
	}
}

// splitPcap writes the records of the pcap at path into two files, as a
// rotated capture would be: the first half of the records, then the rest.
func splitPcap(t *testing.T, path string) (first, second string) {
	t.Helper()
	parts := cutPcap(t, path, 2)
	return parts[0], parts[1]
}

// TestRotatedSets: credits, tick and export read the pieces of a rotated
// capture, given in any order, as the whole capture.
func TestRotatedSets(t *testing.T) {
	dir := simIncast(t)
	s1, tel := filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "perfquery.txt")
	a, b := splitPcap(t, s1)
	for _, args := range [][]string{
		{"credits", "--json"},
		{"tick", "--json", "--telemetry", tel},
	} {
		// input.files lists the pieces one by one; the rest is the same.
		files := regexp.MustCompile(`"files": \[[^\]]*\]`)
		whole := files.ReplaceAllString(runOK(t, append(args, s1)...), `"files": []`)
		pieces := files.ReplaceAllString(runOK(t, append(args, b, a)...), `"files": []`)
		if want := strings.ReplaceAll(whole, `"`+s1+`"`, `"`+b+", "+a+`"`); pieces != want {
			t.Errorf("%s on two pieces:\n%.600s\nwant\n%.600s", args[0], pieces, want)
		}
	}
	out := filepath.Join(t.TempDir(), "p.parquet")
	whole := runOK(t, "export", "--json", "-o", out, s1)
	pieces := runOK(t, "export", "--json", "-o", out, b, a)
	if strings.Split(whole, `"seconds"`)[0] != strings.Split(pieces, `"seconds"`)[0] || !strings.Contains(whole, `"rows": `) {
		t.Errorf("export on two pieces: %s, want %s", pieces, whole)
	}
}

// withoutKeyLines drops the lines of an indented JSON document holding key.
func withoutKeyLines(doc, key string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(doc, "\n") {
		if !strings.Contains(l, key+":") {
			b.WriteString(l)
		}
	}
	return b.String()
}
