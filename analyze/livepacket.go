package analyze

import "github.com/ibscope/ibscope/decode"

// Fill copies the analysed fields of a decoded frame into p, for frames
// that do not come through a Stream: metrics' tests feed the flows
// analysis the frames its live table counts, to compare the two (ibcap
// --metrics itself no longer builds Packets).
func (p *Packet) Fill(f *decode.Frame) { p.fill(f, 0) }
