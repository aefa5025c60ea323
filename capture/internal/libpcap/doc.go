// Package libpcap compiles capture filter expressions (pcap-filter(7):
// "udp port 4791", "host 10.0.0.1 and not icmp") to classic BPF with
// libpcap's own compiler, loaded at run time with dlopen through purego:
// ibscope builds without cgo or libpcap's headers, runs without libpcap
// until a filter expression is given, and accepts exactly tcpdump's
// syntax because it is tcpdump's compiler. It owns the library's loading
// and the struct bpf_program layout; nothing else of libpcap is used.
//
// It is built for linux/amd64 and linux/arm64 (purego's dlopen without
// cgo); elsewhere Compile says expressions are not available.
package libpcap
