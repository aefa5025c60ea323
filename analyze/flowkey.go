package analyze

import (
	"fmt"

	"github.com/ibscope/ibscope/decode"
)

// GroupKey is a flow, link or QP key as the JSON contract writes it: absent
// fields are absent keys.
type GroupKey struct {
	Transport string  `json:"transport"`
	SLID      *uint16 `json:"slid,omitempty"`
	DLID      *uint16 `json:"dlid,omitempty"`
	Src       string  `json:"src,omitempty"`
	Dst       string  `json:"dst,omitempty"`
	DestQP    *uint32 `json:"dest_qp,omitempty"`
}

// GroupBy is how IPD groups packets: per flow, per link direction, per QP.
type GroupBy string

const (
	ByFlow GroupBy = "flow" // (SLID, DLID, DestQP) for IB, (src, dst, DestQP) for RoCE
	ByLink GroupBy = "link" // one direction of a link: every packet to one destination (DLID or address)
	ByQP   GroupBy = "qp"   // DestQP alone
)

// ParseGroupBy reads a grouping by its name; "" is ByFlow.
func ParseGroupBy(name string) (GroupBy, error) {
	switch by := GroupBy(name); by {
	case "":
		return ByFlow, nil
	case ByFlow, ByLink, ByQP:
		return by, nil
	}
	return "", fmt.Errorf("grouping %q: want flow, link or qp", name)
}

// groupKey returns the key p is counted under.
func groupKey(k decode.FlowKey, by GroupBy) decode.FlowKey {
	switch by {
	case ByLink:
		return decode.FlowKey{Transport: k.Transport, DLID: k.DLID, Dst: k.Dst}
	case ByQP:
		return decode.FlowKey{Transport: k.Transport, DestQP: k.DestQP}
	}
	return k
}

// keyJSON renders a group key; by says which fields it holds.
func keyJSON(k decode.FlowKey, by GroupBy) GroupKey {
	j := GroupKey{Transport: k.Transport.String()}
	ib := k.Transport == decode.TransportIB
	if by != ByQP {
		if ib {
			dlid := k.DLID
			j.DLID = &dlid
		} else {
			j.Dst = k.Dst.String()
		}
	}
	if by == ByFlow || by == "" {
		if ib {
			slid := k.SLID
			j.SLID = &slid
		} else {
			j.Src = k.Src.String()
		}
	}
	if by != ByLink {
		qp := k.DestQP
		j.DestQP = &qp
	}
	return j
}

// FlowGroupKey is a flow's key as the JSON contract writes it (by flow),
// for a caller that keeps its own flows (ibcap --metrics' live table).
func FlowGroupKey(k decode.FlowKey) GroupKey { return keyJSON(k, ByFlow) }

// String writes the key for tables: "ib lid 1>2 qp 0x000012",
// "rocev2 192.168.7.1>192.168.7.2 qp 0x000011", "ib >lid 2" (by link),
// "rocev2 qp 0x000011" (by QP), "other" (flows beyond the limit).
func (k GroupKey) String() string {
	s := k.Transport
	switch {
	case k.SLID != nil && k.DLID != nil:
		s += fmt.Sprintf(" lid %d>%d", *k.SLID, *k.DLID)
	case k.DLID != nil:
		s += fmt.Sprintf(" >lid %d", *k.DLID)
	case k.Src != "":
		s += " " + k.Src + ">" + k.Dst
	case k.Dst != "":
		s += " >" + k.Dst
	}
	if k.DestQP != nil {
		s += fmt.Sprintf(" qp 0x%06x", *k.DestQP)
	}
	return s
}
