//go:build !linux || !cgo || noverbs

package capture

import "fmt"

// VerbsAvailable reports whether this build has the verbs backend.
const VerbsAvailable = false

func openVerbs(dev RDMADevice, _ int, _ Config) (Source, error) {
	return nil, fmt.Errorf("capture on %s: %w", dev.Name, ErrVerbsUnavailable)
}
