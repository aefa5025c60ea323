package main

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copyStdin moves standard input into the pipe w until it ends: with
// splice(2), which hands the pages over rather than copying them (a copy
// costs as much as the analysis itself at a few GB/s), when standard input
// is a pipe or a socket; by copying otherwise (a terminal).
func copyStdin(w, in *os.File) {
	if err := spliceStdin(w, in); errors.Is(err, unix.EINVAL) {
		io.Copy(w, in)
	}
}

func spliceStdin(w, in *os.File) error {
	rc, err := w.SyscallConn()
	if err != nil {
		return err
	}
	inFd := int(in.Fd())
	for {
		// Wait for input before the splice, not in it: a splice waiting
		// for input would hold w open after the signal closes it.
		if _, err := unix.Poll([]unix.PollFd{{Fd: int32(inFd), Events: unix.POLLIN}}, -1); err == unix.EINTR {
			continue
		} else if err != nil {
			return err
		}
		var n int64
		var serr error
		err := rc.Write(func(fd uintptr) bool {
			n, serr = unix.Splice(inFd, nil, int(fd), nil, 1<<20, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			return serr != unix.EAGAIN // input is waiting, so w is full: wait for the reader
		})
		switch {
		case err != nil: // w closed by the signal
			return err
		case serr != nil:
			return serr
		case n == 0: // the end of standard input
			return nil
		}
	}
}
