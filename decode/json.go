package decode

import (
	"net/netip"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the frame as one JSON object of the decode contract
// (design.md, "ibanalyze decode --json"), without a newline. Keys are
// snake_case, times integer ns, and absent headers are absent keys. errMsg,
// when not empty, becomes the "error" key. It appends into dst without
// building maps, so printing millions of frames stays cheap.
func (f *Frame) AppendJSON(dst []byte, errMsg string) []byte {
	dst = append(dst, `{"frame":`...)
	dst = strconv.AppendInt(dst, int64(f.Number), 10)
	if !f.NoTs {
		dst = appendInt(dst, "ts_ns", f.TsNs)
	}
	dst = appendInt(dst, "len", int64(f.WireLen))
	if f.Transport != TransportNone {
		dst = appendStr(dst, "transport", f.Transport.String())
	}
	if f.Has&HasLRH != 0 {
		dst = appendInt(dst, "slid", int64(f.LRH.SLID))
		dst = appendInt(dst, "dlid", int64(f.LRH.DLID))
		dst = appendInt(dst, "sl", int64(f.LRH.SL))
		dst = appendInt(dst, "vl", int64(f.LRH.VL))
	}
	if f.Has&(HasIPv4|HasIPv6) != 0 {
		dst = appendAddr(dst, "src", f.Src)
		dst = appendAddr(dst, "dst", f.Dst)
		dst = appendInt(dst, "ecn", int64(f.ECN))
	}
	if f.Has&HasGRH != 0 {
		dst = appendAddr(dst, "sgid", f.GRH.SrcGID())
		dst = appendAddr(dst, "dgid", f.GRH.DstGID())
	}
	if f.Has&HasBTH != 0 {
		b := &f.BTH
		dst = appendInt(dst, "opcode", int64(b.OpCode))
		dst = appendStr(dst, "opcode_name", b.OpCode.String())
		dst = appendInt(dst, "dest_qp", int64(b.DestQP))
		dst = appendInt(dst, "psn", int64(b.PSN))
		dst = appendBool(dst, "ack_req", b.AckReq)
		dst = appendBool(dst, "fecn", b.FECN)
		dst = appendBool(dst, "becn", b.BECN)
		dst = appendBool(dst, "solicited", b.SE)
		dst = appendInt(dst, "pkey", int64(b.PKey))
		dst = appendInt(dst, "pad", int64(b.PadCnt))
	}
	if f.Has&HasDCHeader != 0 { // dc.go
		dst = append(dst, `,"dc":{"header":`...)
		dst = strconv.AppendUint(dst, f.DCHeader.Bytes, 10)
		dst = appendBool(dst, "connect", f.Has&HasDCConnect != 0)
		dst = append(dst, '}')
	}
	if f.Has&HasRDETH != 0 {
		dst = append(dst, `,"rdeth":{"ee_cnxt":`...)
		dst = strconv.AppendUint(dst, uint64(f.RDETH.EECnxt), 10)
		dst = append(dst, '}')
	}
	if f.Has&HasXRCETH != 0 {
		dst = append(dst, `,"xrceth":{"xrc_srq":`...)
		dst = strconv.AppendUint(dst, uint64(f.XRCETH.XRCSRQ), 10)
		dst = append(dst, '}')
	}
	if f.Has&HasRETH != 0 {
		dst = append(dst, `,"reth":{"va":`...)
		dst = strconv.AppendUint(dst, f.RETH.VA, 10)
		dst = appendInt(dst, "rkey", int64(f.RETH.RKey))
		dst = appendInt(dst, "dma_len", int64(f.RETH.DMALen))
		dst = append(dst, '}')
	}
	if f.Has&HasAETH != 0 {
		dst = append(dst, `,"aeth":{"syndrome":`...)
		dst = strconv.AppendUint(dst, uint64(f.AETH.Syndrome), 10)
		dst = appendInt(dst, "msn", int64(f.AETH.MSN))
		dst = append(dst, '}')
	}
	if f.Has&HasDETH != 0 {
		dst = append(dst, `,"deth":{"qkey":`...)
		dst = strconv.AppendUint(dst, uint64(f.DETH.QKey), 10)
		dst = appendInt(dst, "src_qp", int64(f.DETH.SrcQP))
		dst = append(dst, '}')
	}
	if f.Has&HasAtomicETH != 0 {
		a := &f.AtomicETH
		dst = append(dst, `,"atomic_eth":{"va":`...)
		dst = strconv.AppendUint(dst, a.VA, 10)
		dst = appendInt(dst, "rkey", int64(a.RKey))
		dst = append(dst, `,"swap_add":`...)
		dst = strconv.AppendUint(dst, a.SwapAdd, 10)
		dst = append(dst, `,"compare":`...)
		dst = strconv.AppendUint(dst, a.Compare, 10)
		dst = append(dst, '}')
	}
	if f.Has&HasAtomicAckETH != 0 {
		dst = append(dst, `,"atomic_ack_eth":{"orig_rem_data":`...)
		dst = strconv.AppendUint(dst, f.AtomicAckETH.OrigRemData, 10)
		dst = append(dst, '}')
	}
	if f.Has&HasImmDt != 0 {
		dst = appendInt(dst, "imm", int64(f.ImmDt.Imm))
	}
	if f.Has&HasIETH != 0 {
		dst = appendInt(dst, "ieth", int64(f.IETH.RKey))
	}
	if f.Has&HasMAD != 0 { // mad.go
		dst = f.MAD.appendJSON(dst)
	}
	if f.Has&CRCsCheck != 0 {
		if f.Has&HasICRC != 0 {
			dst = appendBool(dst, "icrc_ok", f.ICRCOK)
		}
		if f.Has&HasVCRC != 0 && f.Has&HasLink == 0 {
			dst = appendBool(dst, "vcrc_ok", f.VCRCOK)
		}
	}
	if f.Has&HasLink != 0 {
		l := &f.Link
		dst = append(dst, `,"link":{"op":`...)
		dst = strconv.AppendUint(dst, uint64(l.Op), 10)
		dst = appendInt(dst, "fctbs", int64(l.FCTBS))
		dst = appendInt(dst, "vl", int64(l.VL))
		dst = appendInt(dst, "fccl", int64(l.FCCL))
		if f.Has&CRCsCheck != 0 {
			dst = appendBool(dst, "lpcrc_ok", f.VCRCOK)
		}
		dst = append(dst, '}')
	}
	if f.Has&HasPFC != 0 {
		dst = append(dst, `,"pfc":{"opcode":`...)
		dst = strconv.AppendUint(dst, uint64(f.PFC.Opcode), 10)
		dst = appendInt(dst, "class_enable", int64(f.PFC.ClassEnable))
		dst = append(dst, `,"quanta":[`...)
		for n, q := range f.PFC.Quanta {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendUint(dst, uint64(q), 10)
		}
		dst = append(dst, ']', '}')
	}
	if f.Has&HasPause != 0 {
		dst = append(dst, `,"pause":{"quanta":`...)
		dst = strconv.AppendUint(dst, uint64(f.Pause.Quanta), 10)
		dst = append(dst, '}')
	}
	if f.Has&HasIFA != 0 {
		dst = f.appendIFA(dst)
	}
	if f.Has&HasIFA1 != 0 {
		h := &f.IFA1
		dst = append(dst, `,"ifa1":{"probe_marker":`...)
		dst = strconv.AppendUint(dst, h.ProbeMarker, 10)
		for _, kv := range [...]struct {
			k string
			v uint16
		}{{"version", uint16(h.Version)}, {"msg_type", uint16(h.MsgType)}, {"flags", h.Flags},
			{"request_vector", h.RequestVector}, {"action_vector", h.ActionVector},
			{"hop_limit", uint16(h.HopLimit)}, {"hop_count", uint16(h.HopCount)}, {"max_len", h.MaxLength},
			{"cur_len", h.CurrentLength}, {"sender_handle", h.SenderHandle}, {"seq", h.SeqNumber}} {
			dst = appendInt(dst, kv.k, int64(kv.v))
		}
		dst = append(dst, '}')
	}
	if errMsg != "" {
		dst = appendStr(dst, "error", errMsg)
	}
	return append(dst, '}')
}

// appendIFA appends the IFA 2.0 header, metadata header and hops: "ifa":
// {version, gns, next_hdr, flags, max_len, request_vector, action_vector,
// hop_limit, cur_len, hops: [{lns, device_id, ttl, port_speed, congestion,
// queue, rx_sec, rx_ns, egress_port, ingress_port, residence_ns}]}; lengths
// in 4-byte words, the newest hop first.
func (f *Frame) appendIFA(dst []byte) []byte {
	h := &f.IFA
	dst = append(dst, `,"ifa":{"version":`...)
	dst = strconv.AppendUint(dst, uint64(h.Version), 10)
	dst = appendInt(dst, "gns", int64(h.GNS))
	dst = appendInt(dst, "next_hdr", int64(h.NextHdr))
	dst = appendInt(dst, "flags", int64(h.Flags))
	dst = appendInt(dst, "max_len", int64(h.MaxLength))
	if f.Has&HasIFAMetadata != 0 {
		m := &f.IFAMetadata
		dst = appendInt(dst, "request_vector", int64(m.RequestVector))
		dst = appendInt(dst, "action_vector", int64(m.ActionVector))
		dst = appendInt(dst, "hop_limit", int64(m.HopLimit))
		dst = appendInt(dst, "cur_len", int64(m.CurrentLength))
		dst = append(dst, `,"hops":[`...)
		for i := range m.Hops() {
			if i > 0 {
				dst = append(dst, ',')
			}
			hop := m.Hop(i)
			dst = append(dst, `{"lns":`...)
			dst = strconv.AppendUint(dst, uint64(hop.LNS), 10)
			dst = appendInt(dst, "device_id", int64(hop.DeviceID))
			dst = appendInt(dst, "ttl", int64(hop.IPTTL))
			dst = appendInt(dst, "port_speed", int64(hop.EgressPortSpeed))
			dst = appendInt(dst, "congestion", int64(hop.Congestion))
			dst = appendInt(dst, "queue", int64(hop.QueueID))
			dst = appendInt(dst, "rx_sec", int64(hop.RxTimeSec))
			dst = appendInt(dst, "rx_ns", int64(hop.RxTimeNs))
			dst = appendInt(dst, "egress_port", int64(hop.EgressPort))
			dst = appendInt(dst, "ingress_port", int64(hop.IngressPort))
			dst = appendInt(dst, "residence_ns", int64(hop.ResidenceNs))
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendKey(dst []byte, key string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendInt(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(dst, key), v, 10)
}

func appendBool(dst []byte, key string, v bool) []byte {
	return strconv.AppendBool(appendKey(dst, key), v)
}

func appendAddr(dst []byte, key string, a netip.Addr) []byte {
	dst = append(appendKey(dst, key), '"')
	dst = a.AppendTo(dst)
	return append(dst, '"')
}

// appendStr appends a JSON string; names and messages are ASCII in practice,
// but control characters and invalid UTF-8 are escaped all the same.
func appendStr(dst []byte, key, s string) []byte {
	dst = append(appendKey(dst, key), '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			default:
				dst = append(dst, `\u00`...)
				dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xF])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
