// Package vm boots Debian's stock kernel under qemu as a test bench for
// the kernel's own RDMA stack (SoftRoCE, rdma_rxe): it fetches the kernel
// package into a cache folder (never the host's /boot or /lib/modules),
// builds a busybox initramfs holding the modules the guest needs, shares
// the host's root read-only over 9p, and runs shell scripts in the guest
// over a serial line, their output written back through a writable 9p
// share. Test support only (make vmtest).
package vm
