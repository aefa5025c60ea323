package capture

import (
	"strings"
	"syscall"
	"testing"
)

func TestVerbsStageError(t *testing.T) {
	for _, c := range []struct {
		stage string
		errno syscall.Errno
		want  string
	}{
		{"create raw packet QP", syscall.EPERM, "CAP_NET_RAW"},
		{"create sniffer flow", syscall.EPERM, "CAP_NET_RAW and CAP_NET_ADMIN"},
		{"create sniffer flow", syscall.EOPNOTSUPP, "sniffer flow steering"},
		{"register ring memory", syscall.ENOMEM, "ulimit -l"},
		{"register ring memory", syscall.ENOMEM, "cap_ipc_lock"},
		{"create sniffer flow", syscall.ENXIO, "sniffer flow steering"},
		{"create sniffer flow", syscall.EOPNOTSUPP, "instead, ibcap -i eth2 captures"},
		{"create extended CQ", syscall.EOPNOTSUPP, "does not offer completion timestamps, which the verbs sniffer needs; instead, ibcap -i eth2"},
	} {
		err := verbsStageError("mlx5_0", "eth2", c.stage, c.errno)
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.stage) {
			t.Errorf("%s/%v: %q lacks %q", c.stage, c.errno, err, c.want)
		}
	}
}

// A port without a netdev (InfiniBand) has nothing to capture instead.
func TestVerbsStageErrorWithoutNetdev(t *testing.T) {
	err := verbsStageError("mlx4_0", "", "create extended CQ", syscall.EOPNOTSUPP)
	if !strings.Contains(err.Error(), "no netdev to capture on instead") || strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("%q", err)
	}
}

func TestQueueErrorState(t *testing.T) {
	err := queueErrorState("mlx5_0 port 1", "local length error")
	for _, want := range []string{"mlx5_0 port 1", "error state", "local length error", "no more packets"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := queueErrorState("mlx5_0 port 1", ""); !strings.Contains(err.Error(), "device or its port failed") {
		t.Errorf("no first error: %q", err)
	}
}
