package main

import (
	"errors"
	"io"
)

func runCompare(io.Writer, []string, ipdOpts) error { return errors.New("--compare: not yet") }
