//go:build !linux

package main

import "os"

// isTerminal is false off Linux: no status line, only the final report.
func isTerminal(*os.File) bool { return false }
