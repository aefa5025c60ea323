package testcap

import (
	"encoding/binary"

	"github.com/ibscope/ibscope/decode"
)

// CMMAD builds a 256-byte communication management MAD (a Send) of
// message msg (decode.CMRequest, ...) with the local and remote
// communication IDs; for a REQ or REP, qpn and psn are the sender's QP and
// starting PSN; for a REJ, psn is the reason.
func CMMAD(msg uint16, local, remote, qpn, psn uint32) []byte {
	b := make([]byte, decode.MADLen)
	b[0], b[1], b[2], b[3] = 1, decode.MgmtClassCM, 2, 0x03
	binary.BigEndian.PutUint64(b[8:], uint64(local))
	binary.BigEndian.PutUint16(b[16:], msg)
	m := b[decode.MADHeaderLen:]
	binary.BigEndian.PutUint32(m, local)
	if msg != decode.CMRequest {
		binary.BigEndian.PutUint32(m[4:], remote)
	}
	put24 := func(off int, v uint32) { m[off], m[off+1], m[off+2] = byte(v>>16), byte(v>>8), byte(v) }
	switch msg {
	case decode.CMRequest:
		binary.BigEndian.PutUint64(m[8:], 0x0000000001060000|7174)
		put24(32, qpn)
		put24(44, psn)
	case decode.CMReply:
		put24(12, qpn)
		put24(20, psn)
	case decode.CMReject:
		binary.BigEndian.PutUint16(m[10:], uint16(psn))
	}
	return b
}
