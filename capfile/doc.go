// Package capfile owns the capture files ibscope reads and writes, as
// gopacket's pcapgo does beside its layers: pcap (µs or ns, either byte
// order), pcapng (any number of sections and interfaces, with the options
// ibcap writes) and raw ERF, possibly gzip, bzip2 or zstd compressed. The
// packets inside are decode's: every record read is decoded into a reused
// decode.Frame.
//
// Ways in:
//   - Reader (Open, NewReader) reads one file record by record, telling its
//     format by content, and decodes each record into a decode.Frame,
//     allocating nothing. Damage to the file is a *FileError (after which
//     nothing more is read); a frame that could not be decoded is a
//     *DecodeError naming the file, frame and byte offset, and reading goes on.
//   - Stream (OpenStream, NewStream) is the one way every command reads its
//     input: several captures ("-" for standard input) merged in time order,
//     a file given twice refused (internal/samefile), frames without time or
//     that could not be decoded counted and told (or handed out when asked),
//     damaged files told with file, frame and byte offset while the others
//     are read on.
//     With StreamOptions.Workers above 1, regular files are read ahead
//     and decoded on that many goroutines (readahead.go), the frames handed
//     back in order, the same as on one.
//
// Ways out: Encoder is the one writer of capture bytes: pcap (ns or µs;
// AppendPcapFileHeader, AppendPcapRecord), pcapng (AppendNgSectionHeader,
// AppendNgInterface, AppendNgPacket, AppendNgInterfaceStatistics, each with
// a list of options: the section's and interface's descriptions, epb_flags'
// decode.Direction, an InterfaceStats' drops), ERF records (AppendERFRecord:
// types 21, 25 and 2, the truncated flag when a snap length cut the packet)
// in a pcap or back to back as a raw ERF file; ibcap, ibsim's taps and the
// test captures all write through it. PcapWriter streams a file with it
// (NewPcapWriter: nanosecond pcap of Ethernet, ERF records for native IB,
// or link type 247; NewPcapWriterConfig: any EncoderConfig).
package capfile
