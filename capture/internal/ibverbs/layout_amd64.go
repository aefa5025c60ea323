//go:build linux

package ibverbs

// glibc's pthread types on x86-64, as they sit in struct ibv_context and
// struct ibv_cq_ex.
type (
	pthreadMutex [40 / 8]uint64
	pthreadCond  [48 / 8]uint64
)
