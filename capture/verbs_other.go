//go:build !linux || !(amd64 || arm64)

package capture

import (
	"fmt"
	"runtime"
)

// VerbsAvailable says why the verbs sniffer cannot run here: ibscope's
// libibverbs binding covers linux/amd64 and linux/arm64.
func VerbsAvailable() error {
	return fmt.Errorf("%w, which ibscope loads on linux/amd64 and linux/arm64, not on %s/%s; capture RoCE on the Ethernet netdev with AF_PACKET",
		ErrVerbsUnavailable, runtime.GOOS, runtime.GOARCH)
}

func openVerbs(t Target, _ Config) (Source, error) {
	return nil, fmt.Errorf("capture on %s: %w", t.Device.Name, VerbsAvailable())
}
