package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// ibdumpDevice takes ibdump's way of naming a port: "-d mlx5_0 -i 2" (-i
// is then the port number, 1 when left out) is ibcap's "-i mlx5_0:2".
func ibdumpDevice(f *flags) error {
	if f.ibdumpDev == "" {
		return nil
	}
	port := 1
	if f.device != "" {
		n, err := strconv.Atoi(f.device)
		if err != nil || n < 1 || n > 255 {
			return fmt.Errorf("-d %s -i %s: with -d (ibdump's device flag) -i is the port number, as in ibdump; or name the port alone: ibcap -i %s:2",
				f.ibdumpDev, f.device, f.ibdumpDev)
		}
		port = n
	}
	if strings.Contains(f.ibdumpDev, ":") {
		return fmt.Errorf("-d %s: give the port with -i (ibdump's way) or use ibcap -i %s", f.ibdumpDev, f.ibdumpDev)
	}
	f.device = fmt.Sprintf("%s:%d", f.ibdumpDev, port)
	if !f.quiet {
		fmt.Fprintf(os.Stderr, "ibcap: note: -d %s is ibcap -i %s\n", f.ibdumpDev, f.device)
	}
	return nil
}

// ibdumpFlagHint adds, to a flag error about -s, that ibdump's -s (silent)
// is ibcap's -q: ibcap's -s is the snap length, as tcpdump's.
func ibdumpFlagHint(_ *cobra.Command, err error) error {
	if strings.Contains(err.Error(), `"-s, --snaplen"`) {
		return fmt.Errorf("%w (-s is the snap length in bytes, as in tcpdump; ibdump's -s, silent, is -q)", err)
	}
	return err
}
