//go:build linux

package capture

import (
	"fmt"
	"os/user"
	"strconv"

	"syscall"
)

// DropPrivileges switches the whole process to username's uid, gid and
// supplementary groups, for good: as tcpdump -Z does, once the capture is
// open, so that parsing and writing run unprivileged. Open rings and QPs
// keep working; files opened later are created as that user.
func DropPrivileges(username string) error {
	u, err := user.Lookup(username)
	if err != nil {
		return fmt.Errorf("drop privileges to %q: %w", username, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("drop privileges to %q: non-numeric uid %q or gid %q", username, u.Uid, u.Gid)
	}
	groups := []int{gid}
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.Atoi(g); err == nil && n != gid {
				groups = append(groups, n)
			}
		}
	}
	// Groups first, then gid, then uid: after setuid there is no right left
	// to change the others. The syscall package applies each to every thread
	// (x/sys/unix.Setgroups would change only the calling one).
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("drop privileges to %q: setgroups: %w", username, err)
	}
	if err := syscall.Setresgid(gid, gid, gid); err != nil {
		return fmt.Errorf("drop privileges to %q: setresgid %d: %w", username, gid, err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("drop privileges to %q: setresuid %d: %w", username, uid, err)
	}
	return nil
}
