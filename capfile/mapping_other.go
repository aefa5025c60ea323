//go:build !linux

package capfile

import (
	"errors"
	"os"
)

// maxMapBytes: files are mapped on Linux only; elsewhere they are read.
const maxMapBytes = -1

func mmapFile(*os.File, int) ([]byte, error) { return nil, errors.New("not mapped here") }

func munmapFile([]byte) {}

func dropPages([]byte) {}
