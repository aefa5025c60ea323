package telemetry

import (
	"bytes"
	"strings"
	"testing"
)

func TestSidecarWithoutCounterLines(t *testing.T) {
	text := "# ibscope-telemetry v1 source=mlx5_0/1 clock=host\n" +
		"# a comment\n" +
		"sample_id,start_ns,end_ns,port_xmit_wait,out_of_sequence\n" +
		"0,10,20,4294967295,4294967295\n" +
		"1,30,40,4294967295,3\n"
	s, err := ReadSidecar(strings.NewReader(text), "s")
	if err != nil {
		t.Fatal(err)
	}
	g := s[0]
	if d := g.Delta(1, 0); d.Flags != FlagSaturated {
		t.Errorf("port_xmit_wait from catalogue should saturate: %+v", d)
	}
	if d := g.Delta(1, 1); d.Value != 4 || d.Flags != FlagWrapped {
		t.Errorf("out_of_sequence from catalogue should wrap at 32 bits: %+v", d)
	}
}

func TestSidecarAppendedSegments(t *testing.T) {
	head := "# ibscope-telemetry v1 source=mlx5_0/1 clock=host\nsample_id,start_ns,end_ns,a\n"
	text := head + "0,10,10,1\n1,20,20,2\n" + head + "0,30,30,5\n" +
		"# ibscope-telemetry v1 source=mlx5_0/2 clock=host\nsample_id,start_ns,end_ns,a\n0,40,40,7\n"
	s, err := ReadSidecar(strings.NewReader(text), "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].Len() != 3 || s[1].Len() != 1 || s[1].Source.Port != 2 {
		t.Fatalf("segments: %d series", len(s))
	}
	wantWarning(t, s[0], 6, "sampler restarted")
	if d := s[0].Delta(2, 0); d.Flags&FlagGap == 0 || d.Value != 3 {
		t.Errorf("delta across restart %+v", d)
	}
}

func TestSidecarBadInput(t *testing.T) {
	head := "# ibscope-telemetry v1 source=mlx5_0/1 clock=host\nsample_id,start_ns,end_ns,a,b\n"
	s, err := ReadSidecar(strings.NewReader(head+
		"0,10,10,1,2\n"+
		"1,20,20,1\n"+ // missing
		"2,30,30,1,2,3\n"+ // extra
		"x,40,40,1,2\n"+
		"4,5x,50,1,2\n"+
		"5,60,60,-1,2\n"+
		"7,70,70,3,4\n"+ // lost 6
		"8,1,1,3,4\n"), "bad.csv")
	if err != nil {
		t.Fatal(err)
	}
	g := s[0]
	if g.Len() != 3 {
		t.Errorf("kept %d", g.Len())
	}
	wantWarning(t, g, 4, "4 fields where the column line has 5")
	wantWarning(t, g, 5, "6 fields")
	wantWarning(t, g, 6, `sample_id "x"`)
	wantWarning(t, g, 7, "not an integer")
	wantWarning(t, g, 8, `a value "-1"`)
	wantWarning(t, g, 9, "6 sample(s) lost")
	wantWarning(t, g, 10, "timestamp goes backwards")

	for name, text := range map[string]string{
		"empty":        "",
		"not sidecar":  "hello\n",
		"version":      "# ibscope-telemetry v2 source=a/1\n",
		"bad source":   "# ibscope-telemetry v1 source=a\n",
		"bad clock":    "# ibscope-telemetry v1 clock=moon\n",
		"bad counter":  "# ibscope-telemetry v1\n# counter x width=99\n",
		"bad unit":     "# ibscope-telemetry v1\n# counter x unit=furlongs\n",
		"bad kind":     "# ibscope-telemetry v1\n# counter x kind=odd\n",
		"bad data_id":  "# ibscope-telemetry v1\n# counter x data_id=zz\n",
		"no columns":   "# ibscope-telemetry v1\n",
		"row first":    "# ibscope-telemetry v1\n0,1,2\n",
		"bad col line": "# ibscope-telemetry v1\nsample_id,start,end,a\n",
		"counter 1st":  "# counter a\n",
	} {
		if _, err := ReadSidecar(strings.NewReader(text), "bad.csv"); err == nil || !strings.Contains(err.Error(), "bad.csv") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewSidecarWriter(&bytes.Buffer{}, Source{}, ClockHost, []Counter{{Name: "a,b"}}, nil); err == nil {
		t.Errorf("comma in a name accepted")
	}
	if _, err := NewSidecarWriter(&bytes.Buffer{}, Source{}, ClockHost, nil, map[string]string{"k": "a b"}); err == nil {
		t.Errorf("blank in meta accepted")
	}
	// The reader splits on every Unicode space, so the writer refuses them all
	// (a form feed in a name once read back as a counter with an empty data ID).
	for _, name := range []string{"0\fdata_id", "a\vb", "a\u0085b", "a\u00a0b", "a\rb"} {
		if _, err := NewSidecarWriter(&bytes.Buffer{}, Source{}, ClockHost, []Counter{{Name: name}}, nil); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
}

// "# reset" says the counters started over before the next sample (the
// device went away and came back): the delta into it is a reset even when
// the counter has grown past its old value, the next ones are plain, and
// the writer puts the line and the sample in one write.
func TestSidecarReset(t *testing.T) {
	var b bytes.Buffer
	sw, err := NewSidecarWriter(&b, Source{"rxe0", 1}, ClockHost, []Counter{SysfsCounter("hw_counters", "rcvd_pkts")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	for i, v := range []uint64{100, 0, 500, 600} {
		var missing []bool
		if i == 1 {
			missing = []bool{true}
		}
		if i == 2 {
			sw.Reset()
		}
		before := b.Len()
		if err := sw.Write(uint64(i), int64(10+20*i), int64(20+20*i), []uint64{v}, missing); err != nil {
			t.Fatal(err)
		}
		if i == 2 && !strings.HasPrefix(b.String()[before:], "# reset\n2,") {
			t.Errorf("sample 2 written as %q", b.String()[before:])
		}
		writes++
	}
	if strings.Count(b.String(), "# reset") != 1 {
		t.Errorf("reset written %d times:\n%s", strings.Count(b.String(), "# reset"), b.String())
	}
	s, err := ReadSidecar(strings.NewReader(b.String()), "s")
	if err != nil || len(s) != 1 || s[0].Len() != writes {
		t.Fatalf("%v, %d series", err, len(s))
	}
	g := s[0]
	if d := g.Delta(2, 0); d.Value != 500 || d.Flags != FlagReset|FlagMissing {
		t.Errorf("delta into the reset: %+v", d)
	}
	if d := g.Delta(3, 0); d.Value != 100 || d.Flags != 0 {
		t.Errorf("delta after the reset: %+v", d)
	}
	if d, err := g.DeltaWithin(0, 0, 100); err != nil || d.Value != 600 || d.Flags&FlagReset == 0 {
		t.Errorf("delta across the reset: %+v, %v", d, err)
	}
	if r, f := g.Rate(2, 0); r != 0 || f&FlagReset == 0 {
		t.Errorf("rate into the reset: %v %v", r, f)
	}
	wantWarning(t, g, 7, "counters reset: the device went away and came back")
}
