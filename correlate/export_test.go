package correlate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// generatedCaptures are the small captures testdata/gen writes: every link
// type, transport and extended header, bad CRCs, cut frames.
func generatedCaptures(t testing.TB) []string {
	t.Helper()
	var m []string
	for _, pat := range []string{"*.pcap", "*.pcapng"} {
		g, _ := filepath.Glob(filepath.Join("..", "testdata", "pcaps", pat))
		m = append(m, g...)
	}
	if len(m) == 0 {
		t.Fatal("no captures in ../testdata/pcaps (go run ./testdata/gen writes them)")
	}
	sort.Strings(m)
	return m
}

// contractRows is what the decode JSON contract says about each frame,
// flattened the way export names columns, every value as a string.
func contractRows(t testing.TB, capture string) []map[string]string {
	return contractRowsCRC(t, capture, true)
}

// contractRowsCRC is contractRows with CRC verification on or off.
func contractRowsCRC(t testing.TB, capture string, checkCRC bool) []map[string]string {
	t.Helper()
	r, err := capfile.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetCheckCRC(checkCRC)
	var rows []map[string]string
	var f decode.Frame
	for {
		err := r.Next(&f)
		if err == io.EOF {
			return rows
		}
		msg := ""
		var de *capfile.DecodeError
		if errors.As(err, &de) {
			msg = de.Err.Error()
		} else if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(f.AppendJSON(nil, msg)))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("%s frame %d: contract JSON: %v", capture, f.Number, err)
		}
		row := map[string]string{}
		flatten("", obj, row)
		madRow(row)
		vlanRow(row)
		// What the capture file says of the frame, beside the contract.
		row["cap_len"] = fmt.Sprint(f.CapLen)
		row["file"] = filepath.Base(capture)
		if f.Iface >= 0 {
			row["iface"] = fmt.Sprint(f.Iface)
		}
		if d := directionOf(&f, &Local{}, r.LinkType()); d != dirUnknown {
			row["direction"] = [...]string{dirTx: "tx", dirRx: "rx"}[d]
		}
		rows = append(rows, row)
	}
}

// madRow turns the flattened decode JSON of a MAD or DC packet into the
// export's columns (decode's dcMADColumns): the common header's keys as they are, a
// CM message's identifiers under cm_*, the names and the attributes'
// fields left out (the decode JSON keeps them).
func madRow(row map[string]string) {
	cmKeys := map[string]string{"local_comm_id": "cm_local_comm_id", "remote_comm_id": "cm_remote_comm_id",
		"local_qpn": "cm_qpn", "qpn": "cm_qpn", "remote_qpn": "cm_qpn", "starting_psn": "cm_starting_psn",
		"service_id": "cm_service_id", "reason": "cm_reject_reason"}
	for k, v := range row {
		if k == "dc_connect" {
			delete(row, k) // export keeps the DC header only
		}
		rest, ok := strings.CutPrefix(k, "mad_")
		if !ok {
			continue
		}
		delete(row, k)
		switch {
		case slices.Contains([]string{"base_version", "mgmt_class", "class_version", "method", "status",
			"class_specific", "transaction_id", "attribute_id", "attribute_modifier"}, rest):
			row[k] = v
		case rest == "ip_cm_src_ip" || rest == "ip_cm_dst_ip" || rest == "ip_cm_src_port":
			row["cm_"+strings.TrimPrefix(rest, "ip_cm_")] = v
		case rest == "ip_cm_service_dst_port":
			row["cm_dst_port"] = v
		case strings.HasPrefix(rest, "cm_sidr_req_request_id"):
			row["cm_local_comm_id"] = v
		case strings.HasPrefix(rest, "cm_sidr_rep_request_id"):
			row["cm_remote_comm_id"] = v
		case strings.HasPrefix(rest, "cm_"):
			for field, col := range cmKeys {
				if strings.HasSuffix(rest, "_"+field) && !strings.Contains(rest, "alternate") && !strings.HasSuffix(rest, "_"+field+"_") {
					if field == "qpn" && (strings.HasSuffix(rest, "local_qpn") || strings.HasSuffix(rest, "remote_qpn")) {
						continue
					}
					row[col] = v
				}
			}
		}
	}
}

// vlanRow turns the flattened decode JSON's VLAN tags (vlans_0_id, ...,
// outermost first) into the export's columns: the first tag under vlan_*,
// the second under vlan2_*; export has no columns for a third or fourth.
func vlanRow(row map[string]string) {
	for k, v := range row {
		rest, ok := strings.CutPrefix(k, "vlans_")
		if !ok {
			continue
		}
		delete(row, k)
		switch {
		case strings.HasPrefix(rest, "0_"):
			row["vlan_"+rest[2:]] = v
		case strings.HasPrefix(rest, "1_"):
			row["vlan2_"+rest[2:]] = v
		}
	}
}

// flatten names nested keys the way export names its columns: reth {va}
// becomes reth_va, pfc {quanta [8]} pfc_quanta_0 to _7 (an array of
// objects, ifa {hops}, gives ifa_hops_0_lns, ..., which export has no
// columns for).
func flatten(prefix string, obj map[string]any, out map[string]string) {
	for k, v := range obj {
		switch v := v.(type) {
		case map[string]any:
			flatten(prefix+k+"_", v, out)
		case []any:
			elems := map[string]any{}
			for n, e := range v {
				elems[strconv.Itoa(n)] = e
			}
			flatten(prefix+k+"_", elems, out)
		default:
			out[prefix+k] = fmt.Sprint(v)
		}
	}
}

func exportTo(t testing.TB, capture, out string, opt ExportOptions) ExportStats {
	t.Helper()
	st, err := Export([]string{capture}, out, opt)
	if err != nil {
		t.Fatalf("export %s: %v", capture, err)
	}
	return st
}

// TestExportMatchesContract exports every generated capture to Parquet and
// Arrow and has the independent reader read them back: every frame's row
// must hold exactly the contract's fields and values, nulls where it has no key.
func TestExportMatchesContract(t *testing.T) {
	type file struct {
		capture string
		format  Format
		out     string
		noCRC   bool
	}
	var files []file
	var jobs []readJob
	dir := t.TempDir()
	for i, capture := range generatedCaptures(t) {
		frames := len(contractRows(t, capture))
		for _, format := range []Format{FormatParquet, FormatArrow} {
			out := filepath.Join(dir, fmt.Sprintf("%d%s", i, format.Ext()))
			st := exportTo(t, capture, out, ExportOptions{Format: format})
			if int(st.Frames) != frames || len(st.Files) != 1 || st.Files[0] != out {
				t.Fatalf("%s: exported %d frames to %v, want %d to %s", capture, st.Frames, st.Files, frames, out)
			}
			files = append(files, file{capture, format, out, false})
			jobs = append(jobs, readJob{Kind: format.String(), Path: out})
		}
		// Without CRC checks the CRC columns are null, as the keys are absent.
		out := filepath.Join(dir, fmt.Sprintf("%d-nocrc.arrow", i))
		exportTo(t, capture, out, ExportOptions{Format: FormatArrow, NoCRC: true})
		files = append(files, file{capture, FormatArrow, out, true})
		jobs = append(jobs, readJob{Kind: "arrow", Path: out})
	}
	got := readBack(t, jobs...)
	for i, f := range files {
		name := filepath.Base(f.capture) + "/" + f.format.String()
		if f.noCRC {
			name += "-nocrc"
		}
		t.Run(name, func(t *testing.T) {
			want := contractRowsCRC(t, f.capture, !f.noCRC)
			if f.format == FormatParquet {
				got[i].checkTimestamps(t)
			}
			compareRows(t, got[i].Rows, want)
			if got[i].Metadata["ibscope.capture"] != filepath.Base(f.capture) {
				t.Errorf("metadata ibscope.capture = %q", got[i].Metadata["ibscope.capture"])
			}
			got[i].checkDescribed(t, f.format, filepath.Base(f.capture))
		})
	}
}

// checkDescribed checks what a file says of itself: created_by with the
// version (Parquet), the captures' metadata, and a description per column
// (Arrow field metadata, seen by Arrow JS).
func (o *readerOutput) checkDescribed(t *testing.T, format Format, capture string) {
	t.Helper()
	if format == FormatParquet && o.CreatedBy != createdBy {
		t.Errorf("created_by %q, want %q", o.CreatedBy, createdBy)
	}
	for _, k := range []string{"ibscope.captures", "ibscope.link_types", "ibscope.snap_lens", "ibscope.ts_resolution_ns"} {
		if o.Metadata[k] == "" {
			t.Errorf("metadata %s missing (have %v)", k, o.Metadata)
		}
	}
	if o.Metadata["ibscope.captures"] != capture {
		t.Errorf("metadata ibscope.captures = %q, want %q", o.Metadata["ibscope.captures"], capture)
	}
	if format != FormatArrow {
		return
	}
	for _, c := range o.Schema {
		if c.Metadata[descriptionKey] == "" {
			t.Errorf("column %s has no description in its field metadata", c.Name)
		}
	}
}

func compareRows(t *testing.T, got, want []map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("reader sees %d rows, want %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		for k, w := range want[i] {
			if g, ok := got[i][k]; !ok || g != w {
				if bad++; bad <= 10 {
					t.Errorf("row %d: %s = %q (present %v), contract says %q", i, k, g, ok, w)
				}
			}
		}
		for k, g := range got[i] {
			if _, ok := want[i][k]; !ok {
				if bad++; bad <= 10 {
					t.Errorf("row %d: %s = %q, contract has no such key", i, k, g)
				}
			}
		}
	}
}

// TestExportPartitioned writes two captures into one Hive-style dataset, as
// two hosts would, and has DuckDB query it with hive_partitioning: the
// partition keys come back as columns and every frame is there once.
func TestExportPartitioned(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dataset")
	caps := map[string]string{
		"node1": filepath.Join("..", "testdata", "pcaps", "rocev2_ipv4.pcap"),
		"node2": filepath.Join("..", "testdata", "pcaps", "ib_native_erf.pcap"),
	}
	want := map[string]int{}
	for host, c := range caps {
		keys, err := ParsePartitionBy("host=" + host + ",date,transport")
		if err != nil {
			t.Fatal(err)
		}
		st := exportTo(t, c, root, ExportOptions{PartitionBy: keys})
		for _, row := range contractRows(t, c) {
			tr := row["transport"]
			if tr == "" {
				tr = "none" // frames that are not IB or RoCE
			}
			want[host+"/"+tr]++
		}
		for _, f := range st.Files {
			if !strings.HasPrefix(f, filepath.Join(root, "host="+host, "date=2026-01-02")) {
				t.Errorf("file %s outside its partition", f)
			}
		}
	}
	got := readBack(t, readJob{Kind: "dataset", Path: root},
		readJob{Kind: "sql", Path: filepath.Join(root, "host=node1", "date=2026-01-02", "transport=rocev2", "part-rocev2_ipv4.parquet"),
			SQL: "SELECT count(*) AS n FROM t"})
	counts := map[string]int{}
	for _, row := range got[0].Rows {
		counts[row["host"]+"/"+row["transport"]]++
		if row["date"] != "2026-01-02" {
			t.Fatalf("date partition = %q", row["date"])
		}
	}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("rows per host/transport %v, want %v", counts, want)
	}
	if types := got[0].types(); types["ts_ns"] != duckTimestamp || types["dest_qp"] != "UINTEGER" {
		t.Errorf("dataset types: ts_ns %s, dest_qp %s", types["ts_ns"], types["dest_qp"])
	}
	if n := got[1].Rows[0]["n"]; n != fmt.Sprint(want["node1/rocev2"]) {
		t.Errorf("one partition file holds %s rows, want %d", n, want["node1/rocev2"])
	}
}

// TestExportSeveralFilesNamesEach exports two captures into one file: the
// file column tells their rows apart, and (file, frame) names each row once.
func TestExportSeveralFilesNamesEach(t *testing.T) {
	caps := []string{filepath.Join("..", "testdata", "pcaps", "rocev2_ipv4.pcap"), filepath.Join("..", "testdata", "pcaps", "ib_native_erf.pcap")}
	out := filepath.Join(t.TempDir(), "both.parquet")
	st, err := Export(caps, out, ExportOptions{Format: FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	got := readBack(t, readJob{Kind: "sql", Path: out,
		SQL: "SELECT file, count(*) AS n, count(DISTINCT frame) AS frames FROM t GROUP BY file ORDER BY file"})
	want := map[string]string{}
	for _, c := range caps {
		want[filepath.Base(c)] = fmt.Sprint(len(contractRows(t, c)))
	}
	total := 0
	for _, row := range got[0].Rows {
		if row["n"] != want[row["file"]] || row["frames"] != row["n"] {
			t.Errorf("file %q: %s rows, %s distinct frames; want %s of each", row["file"], row["n"], row["frames"], want[row["file"]])
		}
		n, _ := strconv.Atoi(row["n"])
		total += n
	}
	if len(got[0].Rows) != len(caps) || int64(total) != st.Frames {
		t.Errorf("rows per file %v, want %v (%d frames exported)", got[0].Rows, want, st.Frames)
	}
}
