package main

import (
	"path/filepath"
	"testing"
)

// TestReadFlag: a capture named with -r is read as one named after the
// flags, on every command that reads captures, the -r ones first.
func TestReadFlag(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "pcaps", "rocev1.pcap")
	b := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap")
	for _, c := range []struct {
		name      string
		want, got []string
	}{
		{name: "decode --summary", want: []string{"decode", "--summary", a, b}, got: []string{"decode", "-r", a, "--summary", b}},
		{name: "decode, two -r", want: []string{"decode", a, b}, got: []string{"decode", "--read", a, "-r", b}},
		{name: "flows", want: []string{"flows", "--json", a}, got: []string{"flows", "--json", "-r", a}},
		{name: "ipd", want: []string{"ipd", b}, got: []string{"ipd", "-r", b}},
		{name: "decode -nn, as tcpdump", want: []string{"decode", b}, got: []string{"decode", "-nn", "-r", b}},
		{name: "buffer, receiver last", want: []string{"buffer", a, b}, got: []string{"buffer", "-r", a, b}},
	} {
		want, wantErr, wantCode := run(t, c.want...)
		got, gotErr, gotCode := run(t, c.got...)
		if got != want || gotErr != wantErr || gotCode != wantCode {
			t.Errorf("%s: ibanalyze %q gave (exit %d)\n%s%s\nibanalyze %q (exit %d)\n%s%s", c.name, c.got, gotCode, got, gotErr, c.want, wantCode, want, wantErr)
		}
	}
	// The count a command needs includes the files -r names.
	if _, stderr, code := run(t, "buffer", "-r", a); code == 0 || stderr != "ibanalyze: requires at least 2 arg(s), only received 1\n" {
		t.Errorf("buffer -r with one capture: exit %d, %q", code, stderr)
	}
}
