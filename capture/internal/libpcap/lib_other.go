//go:build !(linux && (amd64 || arm64))

package libpcap

import (
	"fmt"
	"runtime"
)

// Available reports that this build cannot load libpcap.
func Available(paths []string) error {
	return fmt.Errorf("%w, which this build cannot load on %s/%s", ErrUnavailable, runtime.GOOS, runtime.GOARCH)
}

// Compile reports that this build cannot load libpcap.
func Compile(paths []string, expr string, linkType, snapLenBytes int) ([]Instruction, error) {
	return nil, Available(paths)
}
