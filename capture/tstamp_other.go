//go:build !linux

package capture

func netdevHardwareTimestamps(string) (bool, error) { return false, nil }
