package decode

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// RoCE runs over lossless Ethernet: a switch whose buffer fills pauses its
// upstream neighbour with MAC control frames (IEEE 802.3 Annex 31B,
// ethertype 0x8808), either the whole link (802.3x PAUSE, Annex 31B) or one
// priority at a time (802.1Qbb PFC, Annex 31D). Both ask for a pause in
// quanta of 512 bit times at the link rate.

// MAC control numbers.
const (
	EtherTypeMACControl = 0x8808
	MACControlOpPause   = 0x0001 // 802.3x PAUSE: one pause_time for the whole link
	MACControlOpPFC     = 0x0101 // 802.1Qbb PFC: a class-enable vector and eight times
	PauseQuantumBits    = 512    // a pause quantum is 512 bit times at the link rate
	PFCPriorities       = 8
)

// PauseNs converts pause quanta into ns on a link of linkBitsPerSec (e.g.
// 100e9 for 100GbE): quanta * 512 bits / rate. It returns 0 for a rate of 0.
func PauseNs(quanta uint16, linkBitsPerSec int64) int64 {
	if linkBitsPerSec <= 0 {
		return 0
	}
	return int64(quanta) * PauseQuantumBits * 1e9 / linkBitsPerSec
}

// headerError is a problem at a byte offset within one header, so that the
// fast path can name the byte in the frame (FrameError.Offset).
type headerError struct {
	at  int // byte offset within the header
	msg string
}

func (e *headerError) Error() string { return e.msg }

// PFC is a priority-based flow control frame (IEEE 802.1Qbb, the MAC control
// frame of 802.3 Annex 31D): after the ethertype, the opcode 0x0101, the
// priority_enable_vector, and time[0..7]. The bytes after the 20 of the PFC
// (reserved, zero-filled to the minimum frame size) are its payload.
type PFC struct {
	layers.BaseLayer
	Opcode uint16 // MACControlOpPFC
	// ClassEnable is the priority_enable_vector: bit n set means Quanta[n]
	// applies to priority n (a time of 0 resumes it). The high octet is reserved, zero.
	ClassEnable uint16
	// Quanta is time[0..7]: how long priority n is paused, in quanta of 512
	// bit times (PauseNs converts).
	Quanta [PFCPriorities]uint16
}

// PFCLen is the PFC's size after the ethertype: opcode, vector, eight times.
const PFCLen = 2 + 2 + 2*PFCPriorities

// LayerType returns LayerTypePFC.
func (p *PFC) LayerType() gopacket.LayerType { return LayerTypePFC }

// CanDecode returns LayerTypePFC.
func (p *PFC) CanDecode() gopacket.LayerClass { return LayerTypePFC }

// NextLayerType returns LayerTypeZero: what follows is reserved padding.
func (p *PFC) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// Enabled reports whether the vector names priority n (0-7).
func (p *PFC) Enabled(n int) bool { return n >= 0 && n < PFCPriorities && p.ClassEnable>>n&1 != 0 }

// DecodeFromBytes decodes a PFC frame from the bytes after the ethertype. A
// vector that names no priority, a reserved bit set or a time on a disabled
// priority is reported after every field is decoded, with the byte it is at.
func (p *PFC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < PFCLen {
		df.SetTruncated()
		return fmt.Errorf("PFC: %d bytes, need %d", len(data), PFCLen)
	}
	p.Opcode = binary.BigEndian.Uint16(data)
	p.ClassEnable = binary.BigEndian.Uint16(data[2:])
	for n := range p.Quanta {
		p.Quanta[n] = binary.BigEndian.Uint16(data[4+2*n:])
	}
	p.Contents, p.Payload = data[:PFCLen], data[PFCLen:]
	switch {
	case p.Opcode != MACControlOpPFC:
		return &headerError{0, fmt.Sprintf("PFC: opcode 0x%04x is not 0x%04x", p.Opcode, MACControlOpPFC)}
	case p.ClassEnable>>8 != 0:
		return &headerError{2, fmt.Sprintf("PFC: class-enable vector 0x%04x sets reserved bits (the high octet must be 0)", p.ClassEnable)}
	case p.ClassEnable == 0:
		return &headerError{2, "PFC: class-enable vector 0x0000 names no priority"}
	}
	for n, q := range p.Quanta {
		if q != 0 && !p.Enabled(n) {
			return &headerError{4 + 2*n, fmt.Sprintf("PFC: time[%d] is %d quanta but priority %d is not enabled (vector 0x%04x)", n, q, n, p.ClassEnable)}
		}
	}
	return nil
}

// SerializeTo prepends the PFC. With FixLengths the opcode is set to 0x0101.
func (p *PFC) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		p.Opcode = MACControlOpPFC
	}
	h, err := b.PrependBytes(PFCLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(h, p.Opcode)
	binary.BigEndian.PutUint16(h[2:], p.ClassEnable)
	for n, q := range p.Quanta {
		binary.BigEndian.PutUint16(h[4+2*n:], q)
	}
	return nil
}

// Pause is an IEEE 802.3x PAUSE frame (802.3 Annex 31B): after the
// ethertype, the opcode 0x0001 and one pause_time for the whole link. The
// reserved bytes after it are its payload.
type Pause struct {
	layers.BaseLayer
	Opcode uint16 // MACControlOpPause
	Quanta uint16 // pause_time, in quanta of 512 bit times; 0 resumes
}

// PauseLen is the PAUSE's size after the ethertype: opcode and pause_time.
const PauseLen = 4

// PauseRequest is what a PFC or PAUSE frame asks of each priority: the
// priorities it names (a PAUSE: all eight) and their times in quanta (0
// resumes). ok is false for a frame that is neither.
func (f *Frame) PauseRequest() (enable uint8, quanta [PFCPriorities]uint16, ok bool) {
	switch {
	case f.Has&HasPFC != 0:
		return uint8(f.PFC.ClassEnable), f.PFC.Quanta, true
	case f.Has&HasPause != 0:
		for i := range quanta {
			quanta[i] = f.Pause.Quanta
		}
		return 0xFF, quanta, true
	}
	return 0, quanta, false
}

// LayerType returns LayerTypePause.
func (p *Pause) LayerType() gopacket.LayerType { return LayerTypePause }

// CanDecode returns LayerTypePause.
func (p *Pause) CanDecode() gopacket.LayerClass { return LayerTypePause }

// NextLayerType returns LayerTypeZero: what follows is reserved padding.
func (p *Pause) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes a PAUSE frame from the bytes after the ethertype.
func (p *Pause) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < PauseLen {
		df.SetTruncated()
		return fmt.Errorf("PAUSE: %d bytes, need %d", len(data), PauseLen)
	}
	p.Opcode = binary.BigEndian.Uint16(data)
	p.Quanta = binary.BigEndian.Uint16(data[2:])
	p.Contents, p.Payload = data[:PauseLen], data[PauseLen:]
	if p.Opcode != MACControlOpPause {
		return &headerError{0, fmt.Sprintf("PAUSE: opcode 0x%04x is not 0x%04x", p.Opcode, MACControlOpPause)}
	}
	return nil
}

// SerializeTo prepends the PAUSE. With FixLengths the opcode is set to 0x0001.
func (p *Pause) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		p.Opcode = MACControlOpPause
	}
	h, err := b.PrependBytes(PauseLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(h, p.Opcode)
	binary.BigEndian.PutUint16(h[2:], p.Quanta)
	return nil
}

// decodeMACControl decodes ethertype 0x8808 in a gopacket.Packet: PFC and
// PAUSE by their opcode; other MAC control frames (EPON's GATE, ...) are left
// as payload.
func decodeMACControl(data []byte, p gopacket.PacketBuilder) error {
	if len(data) < 2 {
		p.SetTruncated()
		return fmt.Errorf("MAC control: %d bytes, need 2 for the opcode", len(data))
	}
	var l interface {
		gopacket.DecodingLayer
		gopacket.Layer
	}
	switch binary.BigEndian.Uint16(data) {
	case MACControlOpPFC:
		l = &PFC{}
	case MACControlOpPause:
		l = &Pause{}
	default:
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	err := l.DecodeFromBytes(data, p)
	if _, bad := err.(*headerError); err == nil || bad {
		p.AddLayer(l) // a header with a bad field is still all there
	}
	return err
}

// pfcFields: "pfc": {opcode, class_enable, quanta [8]}; in the table the
// quanta are eight columns pfc_quanta_0..7.
var pfcFields = headerFields{
	order: 200,
	has:   HasPFC,
	json: func(dst []byte, f *Frame) []byte {
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
		return append(dst, ']', '}')
	},
	role:    summaryAddresses,
	summary: func(dst []byte, f *Frame) []byte { return f.PFC.appendSummary(dst) },
	columns: []ColumnGroup{{any: HasPFC, Columns: []Column{
		{"pfc_opcode", ColumnUint16, "PFC MAC control opcode (0x0101); null for frames that are not PFC"},
		{"pfc_class_enable", ColumnUint16, "PFC priority-enable vector: bit N set means pfc_quanta_N applies to priority N"},
		{"pfc_quanta_0", ColumnUint16, "PFC pause time of priority 0, quanta of 512 bit times (0 resumes); null for frames that are not PFC"},
		{"pfc_quanta_1", ColumnUint16, "PFC pause time of priority 1, quanta of 512 bit times (0 resumes); null for frames that are not PFC"},
		{"pfc_quanta_2", ColumnUint16, "PFC pause time of priority 2, quanta of 512 bit times (0 resumes); null for frames that are not PFC"},
		{"pfc_quanta_3", ColumnUint16, "PFC pause time of priority 3, quanta of 512 bit times (0 resumes); null for frames that are not PFC"},
		{"pfc_quanta_4", ColumnUint16, "PFC pause time of priority 4, quanta of 512 bit times (0 resumes); null for frames that are not PFC"},
		{"pfc_quanta_5", ColumnUint16, "PFC pause time of priority 5, quanta of 512 bit times (0 resumes); null for frames that are not PFC"},
		{"pfc_quanta_6", ColumnUint16, "PFC pause time of priority 6, quanta of 512 bit times (0 resumes); null for frames that are not PFC"},
		{"pfc_quanta_7", ColumnUint16, "PFC pause time of priority 7, quanta of 512 bit times (0 resumes); null for frames that are not PFC"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Num[0], v.Num[1] = uint64(f.PFC.Opcode), uint64(f.PFC.ClassEnable)
		for k, q := range f.PFC.Quanta {
			v.Num[2+k] = uint64(q)
		}
	}}},
}

func init() { registerFields(&pfcFields) }

// appendSummary shows a PFC frame as its enabled priorities and their
// quanta, "PFC pri 3:65535 4:0" (0 resumes a priority), and the vector
// when it is odd.
func (p *PFC) appendSummary(dst []byte) []byte {
	dst = append(dst, "PFC"...)
	if p.ClassEnable&0xFF != 0 {
		dst = append(dst, " pri"...)
	}
	for n, q := range p.Quanta {
		if p.Enabled(n) {
			dst = strconv.AppendInt(append(dst, ' '), int64(n), 10)
			dst = strconv.AppendUint(append(dst, ':'), uint64(q), 10)
		}
	}
	if p.ClassEnable&0xFF == 0 || p.ClassEnable>>8 != 0 {
		dst = append(dst, " vector 0x"...)
		dst = padLeft(strconv.AppendUint(dst, uint64(p.ClassEnable), 16), len(dst), 4, '0')
	}
	return dst
}

// pauseFields: "pause": {quanta}.
var pauseFields = headerFields{
	order: 210,
	has:   HasPause,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"pause":{"quanta":`...)
		dst = strconv.AppendUint(dst, uint64(f.Pause.Quanta), 10)
		return append(dst, '}')
	},
	role: summaryAddresses,
	summary: func(dst []byte, f *Frame) []byte {
		return strconv.AppendUint(append(dst, "PAUSE quanta "...), uint64(f.Pause.Quanta), 10)
	},
	columns: []ColumnGroup{{any: HasPause, Columns: []Column{
		{"pause_quanta", ColumnUint16, "802.3x PAUSE time, quanta of 512 bit times (0 resumes); null for frames that are not PAUSE"},
	}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = uint64(f.Pause.Quanta) }}},
}

func init() { registerFields(&pauseFields) }
