package analyze

import "github.com/ibscope/ibscope/decode"

// Fill copies the analysed fields of a decoded frame into p, for a live
// feed of frames that does not come through a Stream (ibcap --metrics).
func (p *Packet) Fill(f *decode.Frame) { p.fill(f, 0) }
