// Package samefile finds an input file given twice: under two names, through
// a symbolic or hard link, or simply repeated (`flows a.pcap a.pcap`), which
// would otherwise be read twice and counted twice.
package samefile

import (
	"fmt"
	"os"
)

// Check returns an error naming the first two paths that are the same file
// (os.SameFile: same device and inode), nil if all differ. Paths that cannot
// be stat'ed are left to the open that follows to report.
func Check(paths []string) error {
	infos := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		for j := range i {
			if infos[j] != nil && os.SameFile(infos[j], fi) {
				if paths[j] == p {
					return fmt.Errorf("%s is given twice: each input is read once, give it once", p)
				}
				return fmt.Errorf("%s and %s are the same file: each input is read once, give it once", paths[j], p)
			}
		}
		infos[i] = fi
	}
	return nil
}
