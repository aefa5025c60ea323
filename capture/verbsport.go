package capture

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/ibscope/ibscope/capture/internal/ibverbs"
	"github.com/ibscope/ibscope/decode"
)

// selectPort picks the port to capture on: the one asked for, or port 1
// (the first) when port is 0.
func selectPort(dev RDMADevice, port int) (RDMAPort, error) {
	if len(dev.Ports) == 0 {
		return RDMAPort{}, fmt.Errorf("RDMA device %s lists no ports", dev.Name)
	}
	if port == 0 {
		return dev.Ports[0], nil
	}
	var nums []string
	for _, p := range dev.Ports {
		if p.Num == port {
			return p, nil
		}
		nums = append(nums, strconv.Itoa(p.Num))
	}
	return RDMAPort{}, fmt.Errorf("RDMA device %s has no port %d (ports: %s)", dev.Name, port, strings.Join(nums, ", "))
}

// portLinkType is the pcap link type of what a port delivers.
func portLinkType(p RDMAPort) int {
	if p.LinkLayer == "InfiniBand" {
		return decode.LinkTypeInfiniBand
	}
	return decode.LinkTypeEthernet
}

// portFrameBytes is the largest frame the port delivers.
func portFrameBytes(p RDMAPort) int {
	mtu := 0
	if p.Netdev != "" {
		if ifi, err := net.InterfaceByName(p.Netdev); err == nil {
			mtu = ifi.MTU
		}
	}
	return maxFrameBytes(p.LinkLayer, mtu)
}

// privilegeAdvice says how to give ibcap the capabilities a capture needs.
const privilegeAdvice = "(run as root, or: setcap cap_net_raw,cap_net_admin+ep $(command -v ibcap))"

// verbsStageError explains a failed libibverbs call: which step failed and,
// for permission errors, which capability the step needs; for a device
// that cannot sniff, what it lacks and what to capture instead (netdev is
// the port's RoCE netdev, "" for none).
func verbsStageError(device, netdev, stage string, errno syscall.Errno) error {
	var hint string
	switch {
	case errno == syscall.EPERM || errno == syscall.EACCES:
		switch stage {
		case ibverbs.StepCreateQP:
			hint = ": a raw packet QP needs CAP_NET_RAW " + privilegeAdvice
		case ibverbs.StepCreateFlow:
			hint = ": a sniffer flow (IBV_FLOW_ATTR_SNIFFER) needs CAP_NET_RAW and CAP_NET_ADMIN " + privilegeAdvice
		default:
			hint = ": permission denied by the RDMA device; run as root or with CAP_NET_RAW and CAP_NET_ADMIN"
		}
	case errno == syscall.ENOSYS && stage == ibverbs.StepListDevices:
		hint = ": the kernel offers no RDMA verbs (is ib_uverbs loaded? /sys/class/infiniband_verbs is where it shows)"
	case errno == syscall.EOPNOTSUPP || errno == syscall.ENOSYS || errno == syscall.ENXIO:
		// ibv_create_flow(3): ENXIO when device managed flow steering is off.
		switch stage {
		case ibverbs.StepCreateFlow:
			hint = ": the device or its driver does not offer sniffer flow steering on this port, which the verbs sniffer needs" + captureInstead(netdev)
		case ibverbs.StepCreateCQ:
			hint = ": the device does not offer completion timestamps, which the verbs sniffer needs" + captureInstead(netdev)
		}
	case errno == syscall.ENOMEM:
		// Registered memory counts against RLIMIT_MEMLOCK unless the
		// process has CAP_IPC_LOCK, which setcap can give ibcap.
		hint = ": out of memory registering or creating the ring; try a smaller -B, raise the memlock limit (ulimit -l), or add cap_ipc_lock to ibcap's capabilities"
	}
	return fmt.Errorf("capture on %s: %s: %w%s", device, stage, errno, hint)
}

// captureInstead says what to run on a port the verbs sniffer cannot
// capture: its RoCE netdev with AF_PACKET, which sees the RoCE traffic
// that passes through the kernel, not what the device handles itself.
func captureInstead(netdev string) string {
	if netdev == "" {
		return "; the port has no netdev to capture on instead: capture at the other end of its link"
	}
	return fmt.Sprintf("; instead, ibcap -i %s captures the RoCE traffic that passes through the kernel (not what the device handles itself)", netdev)
}

// errNoDevice is the error of a device sysfs lists but libibverbs does not:
// no user-space provider for it, or no access to /dev/infiniband.
var errNoDevice = errors.New("libibverbs does not list it: install ibverbs-providers (the rdma-core provider for the device) and check that /dev/infiniband/uverbs* is readable")

// queueErrorState is the error of a capture whose receive queue went to the
// error state: the device then flushes every posted buffer without a
// packet, so no packet can arrive any more. firstErr is the status of the
// first failed completion, if one came before the flushes.
func queueErrorState(device, firstErr string) error {
	cause := "the device or its port failed"
	if firstErr != "" {
		cause = "a receive completion failed with: " + firstErr
	}
	return fmt.Errorf("capture on %s: the receive queue went to the error state (%s), so no more packets can arrive", device, cause)
}
