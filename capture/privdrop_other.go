//go:build !linux

package capture

import "errors"

// DropPrivileges is only implemented on Linux.
func DropPrivileges(username string) error {
	return errors.New("drop privileges to " + username + ": only supported on Linux")
}
