//go:build !amd64 || purego

package decode

// Without PCLMULQDQ the CRCs take hash/crc32 and the slicing tables.
const useFold = false

func crcFold(k *foldTable, a, b []byte) (lo, hi uint64) { panic("unreachable") }

func ieeeReduce(lo, hi uint64) uint32 { panic("unreachable") }

func icrcIPv4(k *foldTable, msg []byte) uint32 { panic("unreachable") }

const useFoldIPv4 = false

var foldWide = false
