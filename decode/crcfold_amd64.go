//go:build !purego

package decode

// crcFold and ieeeReduce are in crcfold_amd64.s.
//
//go:noescape
func crcFold(k *foldTable, a, b []byte) (lo, hi uint64)

func ieeeReduce(lo, hi uint64) uint32

func hasPCLMULQDQ() bool

var useFold = hasPCLMULQDQ()
