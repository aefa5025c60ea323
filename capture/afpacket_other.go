//go:build !linux

package capture

import "errors"

func openAFPacket(t Target, _ Config) (Source, error) {
	return nil, errors.New("capture on " + t.Describe() + ": AF_PACKET capture needs Linux")
}
