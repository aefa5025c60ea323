//go:build !linux

package main

import (
	"io"
	"os"
)

// copyStdin copies standard input into the pipe w until it ends.
func copyStdin(w, in *os.File) { io.Copy(w, in) }
