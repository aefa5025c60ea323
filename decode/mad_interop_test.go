package decode

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// madCaptures are the generated captures of management datagrams: native
// SMP, SA, PerfMgt and CM, and CM over RoCEv2 (testdata/gen/mad.go).
var madCaptures = []string{"ib_mad_erf.pcap", "rocev2_cm.pcap"}

// madHeaderWS are the common MAD header's Wireshark 4.0 fields.
var madHeaderWS = []string{"infiniband.mad.baseversion", "infiniband.mad.mgmtclass", "infiniband.mad.classversion",
	"infiniband.mad.method", "infiniband.mad.status", "infiniband.mad.classspecific",
	"infiniband.mad.transactionid", "infiniband.mad.attributeid", "infiniband.mad.attributemodifier"}

// madWSFields lists every Wireshark field the MAD layouts name, once.
func madWSFields() []string {
	seen := map[string]bool{}
	out := append([]string(nil), madHeaderWS...)
	add := func(l *madLayout) {
		for _, f := range l.fields {
			if f.ws != "" && !seen[f.ws] {
				seen[f.ws] = true
				out = append(out, f.ws)
				if strings.HasSuffix(f.ws, "prim_localgid") || strings.HasSuffix(f.ws, "prim_remotegid") {
					out = append(out, f.ws+"_ipv4")
				}
			}
		}
	}
	for _, c := range []*madClass{&smpLIDClass, &smpDirectedClass, &saClass, &perfClass, &cmClass} {
		for _, h := range c.headers {
			add(h.layout)
		}
		for _, a := range c.attrs {
			add(a.layout)
		}
	}
	for _, l := range []*madLayout{&ipCM4Layout, &ipCM6Layout, &ipCMServiceLayout} {
		add(l)
	}
	return out
}

// madOurs renders a decoded MAD as Wireshark field values: the first
// occurrence of each field, as tshark -E occurrence=f gives it.
func madOurs(f *Frame) map[string]string {
	m := &f.MAD
	out := map[string]string{}
	set := func(ws, v string) {
		if _, ok := out[ws]; !ok {
			out[ws] = v
		}
	}
	for i, v := range []uint64{uint64(m.BaseVersion), uint64(m.MgmtClass), uint64(m.ClassVersion), uint64(m.Method),
		uint64(m.Status), uint64(m.ClassSpecific), m.TransactionID, uint64(m.AttributeID), uint64(m.AttributeModifier)} {
		set(madHeaderWS[i], strconv.FormatUint(v, 10))
	}
	ipv4 := f.Has&HasIPv4 != 0
	m.walk(func(off int, l *madLayout) {
		b := m.Data[min(off, len(m.Data)):]
		for i := range l.fields {
			fl := &l.fields[i]
			if fl.ws == "" || fl.end() > len(b) {
				continue
			}
			ws := fl.ws
			switch fl.kind {
			case kindUint:
				v, _ := fl.uintAt(b)
				set(ws, strconv.FormatUint(v, 10))
			case kindGID:
				if ipv4 && (strings.HasSuffix(ws, "prim_localgid") || strings.HasSuffix(ws, "prim_remotegid")) {
					// 4.0 shows a REQ's GIDs as IPv4 addresses on RoCEv2 over IPv4
					set(ws+"_ipv4", netip.AddrFrom4([4]byte(b[fl.off+12:fl.off+16])).String())
					continue
				}
				set(ws, netip.AddrFrom16([16]byte(b[fl.off:fl.off+16])).String())
			case kindIPv4:
				set(ws, netip.AddrFrom4([4]byte(b[fl.off+12:fl.off+16])).String())
			case kindBytes:
				set(ws, hex.EncodeToString(b[fl.off:fl.off+fl.size]))
			case kindString:
				s := b[fl.off : fl.off+fl.size]
				if i := bytes.IndexByte(s, 0); i >= 0 {
					s = s[:i]
				}
				set(ws, string(s))
			}
		}
	})
	return out
}

// madCanonical turns a tshark value of field ws into madOurs' form.
func madCanonical(ws, v string, kind fieldKind) string {
	switch kind {
	case kindGID, kindIPv4:
		if a, err := netip.ParseAddr(v); err == nil {
			return a.String()
		}
	case kindBytes:
		return strings.ToLower(strings.ReplaceAll(v, ":", ""))
	case kindString:
		return v
	}
	if n, err := strconv.ParseUint(v, 0, 64); err == nil {
		return strconv.FormatUint(n, 10)
	}
	return v
}

// TestMADInteropTshark decodes the generated MADs and compares every field
// that Wireshark 4.0 also shows, value for value, and requires tshark to
// show nothing of ours' fields that we leave out.
func TestMADInteropTshark(t *testing.T) {
	tshark := testenv.MustHaveTool(t, "tshark")
	fields := madWSFields()
	kinds := map[string]fieldKind{}
	for _, c := range []*madClass{&smpLIDClass, &smpDirectedClass, &saClass, &perfClass, &cmClass} {
		for _, a := range c.attrs {
			for _, f := range a.layout.fields {
				kinds[f.ws] = f.kind
			}
		}
		for _, h := range c.headers {
			for _, f := range h.layout.fields {
				kinds[f.ws] = f.kind
			}
		}
	}
	for _, l := range []*madLayout{&ipCM4Layout, &ipCM6Layout} {
		for _, f := range l.fields {
			kinds[f.ws] = f.kind
		}
	}
	kinds["infiniband.cm.req.prim_localgid_ipv4"], kinds["infiniband.cm.req.prim_remotegid_ipv4"] = kindIPv4, kindIPv4
	perField := map[string]int{}
	mads := 0
	for _, name := range madCaptures {
		path := filepath.Join(pcapsDir, name)
		lt, recs := fileRecords(t, path)
		args := []string{"-r", path, "-n", "-T", "fields", "-E", "header=n", "-E", "separator=/t", "-E", "occurrence=f"}
		for _, f := range fields {
			args = append(args, "-e", f)
		}
		var stderr bytes.Buffer
		cmd := exec.Command(tshark, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark: %v\n%s", err, stderr.String())
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) != len(recs) {
			t.Fatalf("%s: tshark shows %d frames, we read %d", name, len(lines), len(recs))
		}
		d := Decoder{LinkType: lt}
		var f Frame
		for i, rec := range recs {
			f.CapLen, f.WireLen = len(rec.Data), rec.WireLen
			if err := d.Decode(rec.Data, &f); err != nil {
				t.Fatalf("%s: frame %d: %v", name, rec.Number, err)
			}
			cols := strings.Split(lines[i], "\t")
			if f.Has&HasMAD == 0 {
				continue
			}
			mads++
			ours := madOurs(&f)
			for j, ws := range fields {
				theirs := madCanonical(ws, cols[j], kinds[ws])
				mine, have := ours[ws]
				switch {
				case have && theirs == mine:
					perField[ws]++
				case have && theirs == "":
					t.Errorf("%s: frame %d (%s): %s: we %s, tshark nothing", name, rec.Number, f.MAD.AttributeName(), ws, mine)
				case have:
					t.Errorf("%s: frame %d (%s): %s: tshark %s, we %s", name, rec.Number, f.MAD.AttributeName(), ws, theirs, mine)
				case theirs != "":
					t.Errorf("%s: frame %d (%s): %s: tshark %s, we nothing", name, rec.Number, f.MAD.AttributeName(), ws, theirs)
				}
			}
		}
	}
	total := 0
	for _, ws := range fields {
		total += perField[ws]
		if perField[ws] == 0 {
			t.Errorf("%s: compared on no frame", ws)
		}
	}
	t.Logf("%d MADs, %d field values equal to tshark's over %d fields", mads, total, len(fields))
}
