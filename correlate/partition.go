package correlate

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ibscope/ibscope/decode"
)

// PartitionKey is one directory level of a Hive-style partitioned dataset
// (".../host=node17/date=2026-11-22/transport=rocev2/part-NAME.parquet"),
// the layout Spark, Trino and DuckDB (hive_partitioning) read as columns.
type PartitionKey struct {
	Name string // the key, also the column name readers give it
	// Value is the fixed value of a constant key ("host=node17"); empty for a
	// key derived from each packet (PartitionDate, PartitionHour,
	// PartitionTransport).
	Value string
}

// Keys derived from each packet.
const (
	PartitionDate      = "date"      // UTC day of ts_ns, YYYY-MM-DD
	PartitionHour      = "hour"      // UTC hour of ts_ns, 00-23
	PartitionTransport = "transport" // the transport column; "none" for frames that are not IB or RoCE
)

// ParsePartitionBy reads a list of partition keys: comma-separated keys, each
// either a derived key (date, hour, transport) or NAME=VALUE, a constant such
// as host=node17 that tells this capture's rows from other hosts' in a
// shared dataset.
func ParsePartitionBy(s string) ([]PartitionKey, error) {
	var keys []PartitionKey
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k := PartitionKey{Name: item}
		if name, value, ok := strings.Cut(item, "="); ok {
			k = PartitionKey{Name: name, Value: value}
			if !safePathPart(value) {
				return nil, fmt.Errorf("partition %q: value must be letters, digits, '.', '-' or '_'", item)
			}
		} else if item != PartitionDate && item != PartitionHour && item != PartitionTransport {
			return nil, fmt.Errorf("partition key %q: want date, hour, transport or NAME=VALUE", item)
		}
		if !safePathPart(k.Name) {
			return nil, fmt.Errorf("partition key %q: name must be letters, digits, '.', '-' or '_'", k.Name)
		}
		if k.Value != "" && fieldIndex(packetFields(), k.Name) >= 0 {
			return nil, fmt.Errorf("partition key %q: a constant may not take the name of a packet column", k.Name)
		}
		if seen[k.Name] {
			return nil, fmt.Errorf("partition key %q given twice", k.Name)
		}
		seen[k.Name] = true
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("no partition keys in the list")
	}
	return keys, nil
}

func safePathPart(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func fieldIndex(fields []arrow.Field, name string) int {
	for i, f := range fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

const (
	nsPerHour = int64(time.Hour)
	nsPerDay  = 24 * nsPerHour
)

// partition is where one frame goes: the values of the derived keys that are
// in use (the others stay zero), comparable so it can key the open writers.
type partition struct {
	day       int64 // days since the epoch, UTC
	hour      int8  // 0-23, UTC
	transport decode.Transport
}

// partitioner maps frames to partitions and partitions to directories.
type partitioner struct {
	keys                       []PartitionKey
	byDay, byHour, byTransport bool
}

func newPartitioner(keys []PartitionKey) *partitioner {
	p := &partitioner{keys: keys}
	for _, k := range keys {
		if k.Value != "" {
			continue
		}
		switch k.Name {
		case PartitionDate:
			p.byDay = true
		case PartitionHour:
			p.byHour = true
		case PartitionTransport:
			p.byTransport = true
		}
	}
	return p
}

func (p *partitioner) of(f *decode.Frame) partition {
	var q partition
	if p.byDay || p.byHour {
		day := floorDiv(f.TsNs, nsPerDay)
		if p.byDay {
			q.day = day
		}
		if p.byHour {
			q.hour = int8((f.TsNs - day*nsPerDay) / nsPerHour)
		}
	}
	if p.byTransport {
		q.transport = f.Transport
	}
	return q
}

// dir is the partition's directory under root.
func (p *partitioner) dir(root string, q partition) string {
	parts := []string{root}
	for _, k := range p.keys {
		v := k.Value
		switch {
		case v != "":
		case k.Name == PartitionDate:
			v = time.Unix(0, q.day*nsPerDay).UTC().Format("2006-01-02")
		case k.Name == PartitionHour:
			v = fmt.Sprintf("%02d", q.hour)
		case k.Name == PartitionTransport:
			v = q.transport.String()
			if v == "" {
				v = "none"
			}
		}
		parts = append(parts, k.Name+"="+v)
	}
	return filepath.Join(parts...)
}

// dropsTransport reports whether the transport column lives in the
// directory names rather than in the files, as Hive layouts expect.
func (p *partitioner) dropsTransport() bool { return p.byTransport }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
