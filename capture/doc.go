// Package capture owns packet capture for ibscope: the backends that take
// packets off a device (a verbs sniffer QP on RDMA devices, an AF_PACKET
// TPACKET_V3 ring on Ethernet netdevs carrying RoCE), the kernel BPF filter
// for RoCE, the header filters (QP, LID, opcode), the file writers (nanosecond
// pcap, pcapng, ERF, LINKTYPE_INFINIBAND) with rotation and periodic flushing,
// the accounting of every packet received, written, filtered and dropped, the
// listing of capture devices, and the scheduling of the live telemetry sampler.
//
// The pieces, smallest first:
//
//   - Resolve(name, sysfs) looks a device name up once: a Target says which
//     backend captures it, its RDMA device and port, its netdev and its sysfs
//     paths. Every lookup (Open, TimestampTypes, the telemetry sampler,
//     ibcap's notes) uses it.
//   - Open(device, *Config) (Resolve, then OpenTarget) returns a Source:
//     hardware RDMA devices (mlx5_0, mlx5_0:2) open the verbs backend;
//     software RoCE (rxe0) and netdevs an AF_PACKET ring on the netdev.
//   - OpenFile(path, *Config) reads a capture file as a Source (ibcap -r):
//     its records through the filter expression and the snap length, ERF
//     records unwrapped, io.EOF at the end.
//   - NewWriter writes Packets to one file, a rotating set of files or stdout,
//     always whole records, flushed at least once a second by Run.
//   - Run moves packets from a Source to a Writer until a count, a duration,
//     the context or the end of a file ends it, drains what the ring still holds, and returns a
//     Report that accounts for every packet.
//   - StartTelemetry runs the telemetry package's sysfs sampler for the RDMA
//     port of the device into a sidecar next to the capture (ibcap --telemetry).
//
// The verbs backend loads libibverbs at run time (internal/ibverbs, no cgo):
// where the library is missing, RDMA devices still list and Open says what to
// install, and the AF_PACKET backend works as before.
package capture
