//go:build linux

package capture

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/gopacket/gopacket/afpacket"
	"golang.org/x/sys/unix"
)

// netdevHardwareTimestamps reports whether the netdev's driver stamps
// every received frame with its hardware clock (ETHTOOL_GET_TS_INFO).
func netdevHardwareTimestamps(dev string) (bool, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("time stamp types of %s: %w", dev, err)
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolTsInfo(fd, dev)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
		return false, nil // no ethtool timestamping information: software only
	}
	if err != nil {
		return false, fmt.Errorf("time stamp types of %s (ethtool -T): %w", dev, err)
	}
	return info.So_timestamping&unix.SOF_TIMESTAMPING_RAW_HARDWARE != 0 &&
		info.Rx_filters&(1<<unix.HWTSTAMP_FILTER_ALL) != 0, nil
}

// useHardwareTimestamps turns on the NIC's receive timestamps for every
// frame (SIOCSHWTSTAMP, as libpcap does for adapter types: it changes the
// NIC's setting for every user, and needs CAP_NET_ADMIN) and asks the
// ring for the raw hardware time (PACKET_TIMESTAMP).
func useHardwareTimestamps(tp *afpacket.TPacket, dev string) error {
	fd, err := tpacketFD(tp)
	if err != nil {
		return err
	}
	cfg := unix.HwTstampConfig{Tx_type: 0 /* HWTSTAMP_TX_OFF */, Rx_filter: unix.HWTSTAMP_FILTER_ALL}
	if err := unix.IoctlSetHwTstamp(fd, dev, &cfg); err != nil {
		return fmt.Errorf("turn on hardware receive timestamps (SIOCSHWTSTAMP): %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_TIMESTAMP, unix.SOF_TIMESTAMPING_RAW_HARDWARE); err != nil {
		return fmt.Errorf("ask for hardware timestamps (PACKET_TIMESTAMP): %w", err)
	}
	return nil
}

// tpacketFD is the socket of a gopacket TPacket, which keeps it in an
// unexported field; reading it (not writing) is what reflect allows. The
// field is checked by TestTPacketFD against the version go.mod pins.
func tpacketFD(tp *afpacket.TPacket) (int, error) {
	v := reflect.ValueOf(tp).Elem().FieldByName("fd")
	if !v.IsValid() || v.Kind() != reflect.Int || v.Int() < 0 {
		return -1, errors.New("the AF_PACKET socket of this gopacket version cannot be reached")
	}
	return int(v.Int()), nil
}
