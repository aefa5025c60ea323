package telemetry

// packetCounterFamilies name, for each kind of source, the counters that
// together count every packet a port sent and received, so that a capture
// of the port can be matched against them packet for packet: the IBA port
// counters (sysfs, perfquery, ibcap sidecars of a ConnectX), SoftRoCE's
// (rdma_rxe) hw_counters, which have no byte counters, and a netdev's
// statistics. A series is matched against the first family it has any
// counter of, so that packets are never counted twice (a port's unicast and
// multicast packets are already in its port_*_packets).
var packetCounterFamilies = [][]string{
	{PortXmitPackets, PortRcvPackets},
	{"sent_pkts", "rcvd_pkts"},
	{"tx_packets", "rx_packets"},
}

// PacketCounters returns the columns of s that count the packets its port
// sent and received (packetCounterFamilies), in s's order; none when it has
// none of them.
func PacketCounters(s *Series) []int {
	for _, fam := range packetCounterFamilies {
		var cols []int
		for i, c := range s.Counters {
			for _, name := range fam {
				if c.Name == name && c.Kind == KindCounter {
					cols = append(cols, i)
				}
			}
		}
		if len(cols) > 0 {
			return cols
		}
	}
	return nil
}
