package decode

import (
	"strconv"
	"time"
)

// AppendSummary appends the frame as one human line (what ibanalyze decode
// prints): its number, time of day (UTC, ns) and transport; who sent it,
// what it is and what it measures, each header in its own words
// (fieldTable); its lengths, a snap-length cut, the CRCs' verdicts, and
// errMsg when not empty. The line ends with a newline.
func (f *Frame) AppendSummary(dst []byte, errMsg string) []byte {
	return f.AppendSummaryWith(dst, errMsg, SummaryOptions{})
}

// SummaryOptions add to the summary line what tcpdump's -e and -v add to
// its own.
type SummaryOptions struct {
	// Link adds the Ethernet addresses and each VLAN tag (ID, PCP) before
	// the addresses (-e).
	Link bool
	// Verbose adds the IP header's DSCP, ECN, TTL (hop limit), flow label
	// and the UDP source port after them (-v).
	Verbose bool
}

// AppendSummaryWith is AppendSummary with what opts add.
func (f *Frame) AppendSummaryWith(dst []byte, errMsg string, opts SummaryOptions) []byte {
	// The words of every line are appended with strconv, not fmt, whose
	// boxed arguments cost 8 allocations a line (BenchmarkAppendSummary).
	dst = append(padLeft(strconv.AppendInt(dst, int64(f.Number), 10), len(dst), 6, ' '), ' ')
	if f.NoTs { // a pcapng simple packet block carries no time
		dst = append(dst, "(no time)         "...)
	} else {
		ts := time.Unix(0, f.TsNs).UTC()
		dst = append(ts.AppendFormat(dst, "15:04:05"), '.')
		dst = padLeft(strconv.AppendInt(dst, int64(ts.Nanosecond()), 10), len(dst), 9, '0')
	}
	dst = append(dst, ' ')
	start := len(dst)
	dst = append(dst, f.Transport.String()...)
	dst = append(padRight(dst, start, 6), ' ')
	if opts.Link && f.Has&HasEthernet != 0 {
		dst = AppendMAC(dst, macUint(f.SrcMAC))
		dst = append(dst, " > "...)
		dst = AppendMAC(dst, macUint(f.DstMAC))
		for _, t := range f.VLANs[:f.NumVLANs] {
			dst = strconv.AppendUint(append(dst, " vlan "...), uint64(t.ID), 10)
			dst = strconv.AppendUint(append(dst, " pcp "...), uint64(t.PCP), 10)
			if t.DEI {
				dst = append(dst, " dei"...)
			}
		}
		dst = append(dst, ", "...)
	}
	dst = f.appendWords(dst, summaryAddresses, true)
	if opts.Verbose && f.Has&(HasIPv4|HasIPv6) != 0 {
		dst = strconv.AppendUint(append(dst, " (dscp "...), uint64(f.DSCP), 10)
		dst = strconv.AppendUint(append(dst, " ecn "...), uint64(f.ECN), 10)
		dst = strconv.AppendUint(append(dst, " ttl "...), uint64(f.TTL), 10)
		if f.Has&HasIPv6 != 0 {
			dst = append(dst, " flow 0x"...)
			dst = padLeft(strconv.AppendUint(dst, uint64(f.FlowLabel), 16), len(dst), 5, '0')
		}
		dst = strconv.AppendUint(append(dst, " sport "...), uint64(f.UDPSrc), 10)
		dst = append(dst, ')')
	}
	dst = f.appendWords(dst, summaryTransport, false)
	dst = f.appendWords(dst, summaryProbe, true)
	dst = strconv.AppendInt(append(dst, "  len "...), int64(f.WireLen), 10)
	if f.Has&HasBTH != 0 {
		dst = strconv.AppendInt(append(dst, " payload "...), int64(len(f.Payload)), 10)
	}
	if f.Truncated() {
		dst = strconv.AppendInt(append(dst, " cut at "...), int64(f.CapLen), 10)
		dst = append(dst, " bytes, CRCs not checked"...)
	}
	if f.Has&CRCsCheck != 0 {
		if f.Has&HasICRC != 0 {
			dst = appendVerdict(dst, " icrc", f.ICRCOK)
		}
		if f.Has&HasVCRC != 0 {
			name := " vcrc"
			if f.Has&HasLink != 0 {
				name = " lpcrc"
			}
			dst = appendVerdict(dst, name, f.VCRCOK)
		}
	}
	if errMsg != "" {
		dst = append(dst, "  error: "...)
		dst = append(dst, errMsg...)
	}
	return append(dst, '\n')
}

// appendWords appends the words of the frame's headers of role, in
// fieldTable's order; only the first header present's when first.
func (f *Frame) appendWords(dst []byte, role summaryRole, first bool) []byte {
	for _, h := range fieldTable {
		has := h.summaryHas
		if has == 0 {
			has = h.has
		}
		if h.role != role || f.Has&has == 0 {
			continue
		}
		dst = h.summary(dst, f)
		if first {
			break
		}
	}
	return dst
}

// appendVerdict appends a CRC's name and whether it is right.
func appendVerdict(dst []byte, name string, ok bool) []byte {
	dst = append(dst, name...)
	if ok {
		return append(dst, " ok"...)
	}
	return append(dst, " BAD"...)
}

// padLeft right-aligns what dst holds from start in width columns (fmt's
// %*d, or %0*d with pad '0'), inserting pad before it.
func padLeft(dst []byte, start, width int, pad byte) []byte {
	n := len(dst) - start
	if n >= width {
		return dst
	}
	for range width - n {
		dst = append(dst, pad)
	}
	copy(dst[start+width-n:], dst[start:start+n])
	for i := start; i < start+width-n; i++ {
		dst[i] = pad
	}
	return dst
}

// padRight left-aligns what dst holds from start in width columns (%-*s).
func padRight(dst []byte, start, width int) []byte {
	for n := len(dst) - start; n < width; n++ {
		dst = append(dst, ' ')
	}
	return dst
}
