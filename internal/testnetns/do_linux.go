package testnetns

import (
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ibscope/ibscope/internal/txring"
)

// Do runs f on an OS thread that has entered the namespace; sockets f opens
// stay in the namespace after it returns.
func (ns *NS) Do(t testing.TB, f func() error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		// The thread is never unlocked: Go retires it when this goroutine
		// ends, so no other goroutine ever runs in the test namespace.
		runtime.LockOSThread()
		fd, err := unix.Open("/var/run/netns/"+ns.Name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open namespace %s: %w", ns.Name, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter namespace %s: %w", ns.Name, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// OpenTx opens ibscope's transmit ring on Send, failing the test if it
// cannot; the caller closes it.
func (ns *NS) OpenTx(t testing.TB) *txring.Ring {
	t.Helper()
	var r *txring.Ring
	if err := ns.Do(t, func() (err error) { r, err = txring.Open(ns.Send); return err }); err != nil {
		t.Fatal(err)
	}
	return r
}
