package vmbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// tsharkFields are what the bench reads of each frame with tshark, and how
// each compares with `ibanalyze decode --json` (the key path in its JSON).
// Wireshark shows the AtomicETH's address and key as the RETH's fields.
var tsharkFields = []struct{ field, key string }{
	{"frame.time_epoch", "ts_ns"},
	{"ip.src", "src"}, {"ip.dst", "dst"}, {"ipv6.src", "src"}, {"ipv6.dst", "dst"},
	{"infiniband.bth.opcode", "opcode"}, {"infiniband.bth.destqp", "dest_qp"},
	{"infiniband.bth.psn", "psn"}, {"infiniband.bth.p_key", "pkey"},
	{"infiniband.bth.a", "ack_req"}, {"infiniband.bth.se", "solicited"}, {"infiniband.bth.padcnt", "pad"},
	{"infiniband.reth.va", "reth.va"}, {"infiniband.reth.r_key", "reth.rkey"}, {"infiniband.reth.dmalen", "reth.dma_len"},
	{"infiniband.aeth.syndrome", "aeth.syndrome"}, {"infiniband.aeth.msn", "aeth.msn"},
	{"infiniband.deth.q_key", "deth.qkey"}, {"infiniband.deth.srcqp", "deth.src_qp"},
	{"infiniband.atomiceth.swapdt", "atomic_eth.swap_add"}, {"infiniband.atomiceth.cmpdt", "atomic_eth.compare"},
	{"infiniband.atomicacketh.origremdt", "atomic_ack_eth.orig_rem_data"},
	{"infiniband.immdt", "imm"}, {"infiniband.ieth", "ieth"},
	{"infiniband.mad.attributeid", ""}, // read for the cm check, not compared with decode
}

// tsharkFrame is one frame as tshark reads it: field → value ("" absent).
type tsharkFrame map[string]string

func tsharkRead(path string) ([]tsharkFrame, error) {
	args := []string{"-r", path, "-T", "fields", "-E", "occurrence=f", "-E", "separator=\t"}
	for _, f := range tsharkFields {
		args = append(args, "-e", f.field)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("tshark", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("tshark -r %s: %v: %s", path, err, stderr.String())
	}
	var frames []tsharkFrame
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if l == "" {
			continue
		}
		v := strings.Split(l, "\t")
		if len(v) != len(tsharkFields) {
			return nil, fmt.Errorf("tshark -r %s: %d fields in %q, want %d", path, len(v), l, len(tsharkFields))
		}
		f := tsharkFrame{}
		for i, tf := range tsharkFields {
			f[tf.field] = v[i]
		}
		frames = append(frames, f)
	}
	return frames, nil
}

// src is the frame's IPv4 or IPv6 source address.
func (f tsharkFrame) src() string {
	if f["ip.src"] != "" {
		return f["ip.src"]
	}
	return f["ipv6.src"]
}

func (f tsharkFrame) num(field string) (uint64, bool) {
	v := f[field]
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 0, 64)
	return n, err == nil
}

// lookup follows a dotted key path in a decoded JSON object.
func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = o[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// epochNs turns tshark's frame.time_epoch (seconds with 9 decimals) into
// ns exactly, without a float.
func epochNs(s string) (int64, error) {
	sec, frac, _ := strings.Cut(s, ".")
	frac = (frac + "000000000")[:9]
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, err
	}
	b, err := strconv.ParseInt(frac, 10, 64)
	return a*1e9 + b, err
}

// compareDecode compares ibanalyze decode --json's lines with tshark's
// frames, field for field, and returns the differences (at most 10 named).
func compareDecode(jsonLines []byte, ts []tsharkFrame) (checked int, diffs []string) {
	dec := json.NewDecoder(bytes.NewReader(jsonLines))
	dec.UseNumber()
	var ours []map[string]any
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if err.Error() != "EOF" {
				diffs = append(diffs, "decode --json: "+err.Error())
			}
			break
		}
		ours = append(ours, m)
	}
	if len(ours) != len(ts) {
		diffs = append(diffs, fmt.Sprintf("decode printed %d frames, tshark read %d", len(ours), len(ts)))
	}
	add := func(s string) {
		if len(diffs) < 10 {
			diffs = append(diffs, s)
		}
	}
	for i := 0; i < len(ours) && i < len(ts); i++ {
		m, t := ours[i], ts[i]
		if ok, _ := m["icrc_ok"].(bool); !ok {
			add(fmt.Sprintf("frame %d: icrc_ok %v (rxe computes the ICRC)", i+1, m["icrc_ok"]))
		}
		for _, f := range tsharkFields {
			tv := t[f.field]
			if f.field == "infiniband.reth.va" || f.field == "infiniband.reth.r_key" {
				// An AtomicETH's address and key are in tshark's RETH fields.
				if _, ok := m["atomic_eth"]; ok {
					k := map[string]string{"infiniband.reth.va": "atomic_eth.va", "infiniband.reth.r_key": "atomic_eth.rkey"}[f.field]
					checkField(i, k, tv, m, add)
					checked++
					continue
				}
			}
			if tv == "" || f.key == "" {
				continue
			}
			checkField(i, f.key, tv, m, add)
			checked++
		}
	}
	return checked, diffs
}

func checkField(i int, key, tv string, m map[string]any, add func(string)) {
	ov, ok := lookup(m, key)
	if !ok {
		add(fmt.Sprintf("frame %d: tshark has %s %q, decode no %s", i+1, key, tv, key))
		return
	}
	var want, got string
	switch o := ov.(type) {
	case bool:
		got = map[bool]string{true: "1", false: "0"}[o]
		want = tv
		if tv == "True" || tv == "False" {
			want = map[string]string{"True": "1", "False": "0"}[tv]
		}
	case json.Number:
		got = o.String()
		switch {
		case key == "ts_ns":
			ns, err := epochNs(tv)
			want = strconv.FormatInt(ns, 10)
			if err != nil {
				want = tv
			}
		case key == "imm" || key == "ieth":
			// FT_BYTES: hex digits, network order.
			n, err := strconv.ParseUint(strings.ReplaceAll(tv, ":", ""), 16, 32)
			want = strconv.FormatUint(n, 10)
			if err != nil {
				if n2, err2 := strconv.ParseUint(tv, 0, 64); err2 == nil {
					want = strconv.FormatUint(n2, 10)
				} else {
					want = tv
				}
			}
		default:
			n, err := strconv.ParseUint(tv, 0, 64)
			want = strconv.FormatUint(n, 10)
			if err != nil {
				want = tv
			}
		}
	case string:
		got, want = o, tv
	default:
		got, want = fmt.Sprint(o), tv
	}
	if got != want {
		add(fmt.Sprintf("frame %d: %s: decode %s, tshark %s", i+1, key, got, want))
	}
}
