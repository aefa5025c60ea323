package decode

// DecodeHead decodes data as Decode does, for a caller that reads only the
// frame's head: Transport, Has, Iface, ICRCOK and VCRCOK (with the record's
// fields, which the caller sets). Those are Decode's, and so is the error;
// of the common RoCEv2 frame (untagged Ethernet, IPv4 without options, an
// RDMA WRITE, SEND, READ or ACK packet: rocev2fast.go) the other fields are
// left as the frame before left them, and the ICRC is checked as Decode
// checks it. Any other frame is decoded whole. decode --summary, which
// counts frames, errors and bad CRCs, reads nothing else; filling the
// headers' fields it does not read was a third of its instructions.
func (d *Decoder) DecodeHead(data []byte, f *Frame) error {
	if d.LinkType == LinkTypeEthernet {
		if ok, err := d.ethernetRoCEv2(data, f, true); ok {
			return err
		}
	}
	return d.Decode(data, f) // Resets f first
}
