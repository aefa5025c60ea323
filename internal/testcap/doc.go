// Package testcap builds small captures with known timestamps for tests:
// RoCEv2 and native InfiniBand packets serialized with gopacket and the
// decode package's layers, sealed with decode.SealRoCE and decode.SealNative,
// and written with capfile.NewPcapWriter; and reads captures' records back.
package testcap
