//go:build linux

package ibverbs

// glibc's pthread types on aarch64: pthread_mutex_t is 48 bytes there, not
// 40, so struct ibv_context and struct ibv_cq_ex differ from x86-64's after
// it. (musl makes it 40; rdma-core on musl is not supported.)
type (
	pthreadMutex [48 / 8]uint64
	pthreadCond  [48 / 8]uint64
)
