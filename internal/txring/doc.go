// Package txring is ibscope's own fast frame sender for tests and
// benchmarks: an AF_PACKET TPACKET_V2 transmit ring that bypasses the qdisc
// and hands the kernel a batch of frames per sendto(2), paced to a rate.
// tcpreplay makes a syscall per frame, which on a virtual machine caps it
// far below the rates a capture must be measured at. It only ever sends on
// the interface it is given, which tests create inside their own network
// namespaces.
package txring
