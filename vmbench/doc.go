// Package vmbench is the SoftRoCE test bench: its tests boot Debian's stock
// kernel under qemu (internal/vm), make two rdma_rxe devices on a veth pair
// in the guest, run a matrix of perftest, rping and immwrite (RDMA WRITE
// with immediate, testdata/immwrite) traffic while ibcap captures, and
// check ibscope's captures, decodes and analyses against the kernel stack's
// own counters, tshark and netem's statistics. Run by `make vmtest` (and so
// `make test`); `go test ./...` alone skips it.
package vmbench
