// Package ibverbs is ibscope's narrow binding to libibverbs (rdma-core),
// loaded at run time with dlopen through purego instead of linked with cgo:
// ibscope builds without a C compiler or the verbs headers, for arm64 too,
// and a machine without rdma-core still runs everything but the verbs
// sniffer. It owns the struct layouts of verbs.h it relies on (layout.go),
// the calls a sniffer capture makes, and a completion poll written in
// assembly so one call into C serves a batch of packets.
//
// It is built for linux/amd64 and linux/arm64, whose layouts are pinned by
// layout_test.go; elsewhere it is empty and package capture says the verbs
// sniffer is not available.
package ibverbs
