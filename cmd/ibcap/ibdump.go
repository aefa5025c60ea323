package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/capture"
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

// ibdumpFlags are ibdump's flags that ibcap maps to its own or refuses,
// naming what it does instead.
type ibdumpFlags struct {
	output       string // -o, --output: ibdump's alias of -w
	maxBurst     int    // -b, --max-burst: log2 of ibdump's receive entries
	memMode      string // -M, --mem-mode SIZE
	writerThread string // --writer-thread SIZE
	silent       bool   // --silent: ibdump's -s
}

// maxBurstLog2 bounds -b: 2^24 entries of 4 KiB are a 64 GiB ring.
const maxBurstLog2 = 24

func addIbdumpFlags(fl *pflag.FlagSet, b *ibdumpFlags) {
	fl.StringVarP(&b.output, "output", "o", "", "ibdump's -o, its alias of -w: the file to write")
	fl.IntVarP(&b.maxBurst, "max-burst", "b", 0, "ibdump's -b (log2 of its receive entries): refused, naming the -B that gives ibcap's ring that many 4 KiB slots")
	fl.StringVarP(&b.memMode, "mem-mode", "M", "", "ibdump's --mem-mode: refused; ibcap writes beside the receive loop, with -B's ring for bursts (see the message)")
	fl.StringVar(&b.writerThread, "writer-thread", "", "ibdump's --writer-thread: refused; ibcap always writes from a goroutine of its own")
	fl.BoolVar(&b.silent, "silent", false, "ibdump's --silent: -q")
}

// ibdumpFlagsMapped applies ibdump's flags: -o is -w and --silent -q;
// -b, --mem-mode and --writer-thread are refused with ibcap's way.
func ibdumpFlagsMapped(fl *pflag.FlagSet, f *flags) error {
	b := &f.ibdump
	if fl.Changed("max-burst") {
		if b.maxBurst < 0 || b.maxBurst > maxBurstLog2 {
			return fmt.Errorf("-b %d: ibdump's log2 of the receive entries, 0 to %d", b.maxBurst, maxBurstLog2)
		}
		return fmt.Errorf("-b %d is ibdump's ring of 2^%d = %d receive entries; ibcap sizes its ring in KiB with -B (default %d KiB), a 4 KiB slot per InfiniBand packet: %d slots are -B %d",
			b.maxBurst, b.maxBurst, 1<<b.maxBurst, capture.DefaultRingBytes>>10, 1<<b.maxBurst, (1<<b.maxBurst)*4)
	}
	if b.memMode != "" {
		return fmt.Errorf("--mem-mode %s: ibdump holds the capture in memory and writes it when it stops; ibcap writes as it captures, from a goroutine of its own beside the receive loop (up to 16 MB of records queued), "+
			"with the ring (-B KiB) to absorb bursts, and counts every drop: there is no memory mode. To stop after an amount give -c COUNT or --duration; for memory speed write to a tmpfs (-w /dev/shm/x.pcap)", b.memMode)
	}
	if b.writerThread != "" {
		return fmt.Errorf("--writer-thread %s: ibcap always writes from a goroutine of its own beside the receive loop (up to 16 MB of records queued); leave it out", b.writerThread)
	}
	if b.silent {
		f.quiet = true
	}
	if b.output != "" {
		if f.file != "" && f.file != b.output {
			return fmt.Errorf("-o %s and -w %s: -o is ibdump's alias of -w; give one", b.output, f.file)
		}
		f.file = b.output
		if !f.quiet {
			fmt.Fprintf(os.Stderr, "ibcap: note: -o %s is ibcap -w %s\n", b.output, b.output)
		}
	}
	return nil
}
