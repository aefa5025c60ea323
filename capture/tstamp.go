package capture

import "fmt"

// Time stamp types, named as tcpdump's -j and libpcap's
// pcap_tstamp_type_val_to_name name them.
const (
	// TimestampHost is the kernel's receive time (AF_PACKET's default).
	TimestampHost = "host"
	// TimestampAdapter is the device's timestamp on the host's clock: a
	// verbs port's completion timestamps, converted (its only type).
	TimestampAdapter = "adapter"
	// TimestampAdapterUnsynced is the NIC's own clock (its PTP hardware
	// clock), as the NIC stamped the frame on arrival; it is the host's
	// time only when something (phc2sys) keeps that clock on it.
	TimestampAdapterUnsynced = "adapter_unsynced"
)

// TimestampTypes lists the time stamp types the target's capture path
// offers, the default first: a verbs port offers adapter; an AF_PACKET
// capture (a software RoCE device's included) host, and adapter_unsynced
// when the netdev's driver reports hardware receive timestamps for every
// frame (ethtool -T: hardware-raw-clock and rx filter all).
func (t Target) TimestampTypes() ([]string, error) {
	if t.Backend == BackendVerbs {
		return []string{TimestampAdapter}, nil
	}
	types := []string{TimestampHost}
	if t.Netdev == "" {
		return types, nil // every interface: each has its own clock
	}
	hw, err := netdevHardwareTimestamps(t.Netdev)
	if err != nil {
		return nil, err
	}
	if hw {
		types = append(types, TimestampAdapterUnsynced)
	}
	return types, nil
}

// checkTimestampType refuses a type the device does not offer, naming
// those it does.
func checkTimestampType(device, want string, offered []string) error {
	if want == "" {
		return nil
	}
	for _, t := range offered {
		if t == want {
			return nil
		}
	}
	switch want {
	case TimestampHost, TimestampAdapter, TimestampAdapterUnsynced:
		return fmt.Errorf("capture on %s: time stamp type %s: it offers %v", device, want, offered)
	}
	return fmt.Errorf("time stamp type %q: want %s, %s or %s", want, TimestampHost, TimestampAdapter, TimestampAdapterUnsynced)
}
