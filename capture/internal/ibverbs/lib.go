//go:build linux && (amd64 || arm64)

package ibverbs

import (
	"runtime"
	"syscall"

	"github.com/ebitengine/purego"

	"github.com/ibscope/ibscope/capture/internal/cmem"
)

// Lib is a loaded libibverbs: the exported functions the sniffer calls.
// The static inline functions of verbs.h are not in the library; they go
// through the function pointers of the structs it returns (ctxOp, ibvCQEx).
type Lib struct {
	path          string
	errnoLocation uintptr // libc's __errno_location: errno of the calling thread

	getDeviceList  uintptr // struct ibv_device **ibv_get_device_list(int *num_devices)
	freeDeviceList uintptr // void ibv_free_device_list(struct ibv_device **list)
	getDeviceName  uintptr // const char *ibv_get_device_name(struct ibv_device *device)
	openDevice     uintptr // struct ibv_context *ibv_open_device(struct ibv_device *device)
	closeDevice    uintptr // int ibv_close_device(struct ibv_context *context)
	queryDevice    uintptr // int ibv_query_device(struct ibv_context *, struct ibv_device_attr *)
	allocPD        uintptr // struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
	deallocPD      uintptr // int ibv_dealloc_pd(struct ibv_pd *pd)
	regMR          uintptr // struct ibv_mr *ibv_reg_mr(struct ibv_pd *, void *addr, size_t length, int access)
	deregMR        uintptr // int ibv_dereg_mr(struct ibv_mr *mr)
	createQP       uintptr // struct ibv_qp *ibv_create_qp(struct ibv_pd *, struct ibv_qp_init_attr *)
	modifyQP       uintptr // int ibv_modify_qp(struct ibv_qp *, struct ibv_qp_attr *, int attr_mask)
	destroyQP      uintptr // int ibv_destroy_qp(struct ibv_qp *qp)
	destroyCQ      uintptr // int ibv_destroy_cq(struct ibv_cq *cq)
	wcStatusStr    uintptr // const char *ibv_wc_status_str(enum ibv_wc_status status)
}

// Open loads libibverbs from path (a soname such as libibverbs.so.1, which
// dlopen looks up along LD_LIBRARY_PATH and the system's path, or a file) and looks up
// every function the sniffer calls, so a missing one is found before any
// device is touched. The library stays loaded for the life of the process:
// its providers are loaded by it and are not meant to be unloaded.
func Open(path string) (*Lib, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	l := &Lib{path: path}
	for _, s := range []struct {
		name string
		addr *uintptr
	}{
		{"ibv_get_device_list", &l.getDeviceList},
		{"ibv_free_device_list", &l.freeDeviceList},
		{"ibv_get_device_name", &l.getDeviceName},
		{"ibv_open_device", &l.openDevice},
		{"ibv_close_device", &l.closeDevice},
		{"ibv_query_device", &l.queryDevice},
		{"ibv_alloc_pd", &l.allocPD},
		{"ibv_dealloc_pd", &l.deallocPD},
		{"ibv_reg_mr", &l.regMR},
		{"ibv_dereg_mr", &l.deregMR},
		{"ibv_create_qp", &l.createQP},
		{"ibv_modify_qp", &l.modifyQP},
		{"ibv_destroy_qp", &l.destroyQP},
		{"ibv_destroy_cq", &l.destroyCQ},
		{"ibv_wc_status_str", &l.wcStatusStr},
		// libc's, found through the library's dependencies.
		{"__errno_location", &l.errnoLocation},
	} {
		p, err := purego.Dlsym(h, s.name)
		if err != nil || p == 0 {
			purego.Dlclose(h)
			return nil, &LoadError{Path: path, Symbol: s.name, Err: err}
		}
		*s.addr = p
	}
	return l, nil
}

// call calls the C function fn and returns its result and errno, which the
// function may have set: errno is thread-local, so the goroutine stays on
// its thread from clearing errno to reading it. Two calls into C: fine for
// setup, not for the packet path.
//
//go:uintptrescapes
func (l *Lib) call(fn uintptr, args ...uintptr) (uintptr, syscall.Errno) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	loc, _, _ := purego.SyscallN(l.errnoLocation)
	errno := (*int32)(cmem.Pointer(loc))
	*errno = 0
	r, _, _ := purego.SyscallN(fn, args...)
	return r, syscall.Errno(*errno)
}

// callInt calls a function that returns an int: 0, or an errno value.
//
//go:uintptrescapes
func callInt(fn uintptr, args ...uintptr) syscall.Errno {
	r, _, _ := purego.SyscallN(fn, args...)
	return syscall.Errno(int32(r))
}
