//go:build !linux

package capture

import "errors"

func openAFPacket(dev string, _ Config) (Source, error) {
	return nil, errors.New("capture on " + dev + ": AF_PACKET capture needs Linux")
}
