package ibverbs

import (
	"fmt"
	"strings"
	"syscall"
)

// The steps of opening a sniffer, as errors name them.
const (
	StepListDevices = "list RDMA devices (ibv_get_device_list)"
	StepOpenDevice  = "open device"
	StepQueryDevice = "query device"
	StepAllocPD     = "allocate protection domain"
	StepCreateCQ    = "create extended CQ"
	StepCreateQP    = "create raw packet QP"
	StepQPInit      = "move QP to INIT"
	StepQPRTR       = "move QP to RTR"
	StepRegMR       = "register ring memory"
	StepCreateFlow  = "create sniffer flow"
	StepPostRecv    = "post receive buffers"
	StepPoll        = "poll completions"
	StepReadClock   = "read the device clock (ibv_query_rt_values_ex)"
)

// CallError is a failed libibverbs call: the step and the errno.
type CallError struct {
	Step  string
	Errno syscall.Errno
}

func (e *CallError) Error() string { return e.Step + ": " + e.Errno.Error() }
func (e *CallError) Unwrap() error { return e.Errno }

// NotListedError is what OpenDevice returns when libibverbs does not list
// the device: no provider for it, or no access to /dev/infiniband.
type NotListedError struct {
	Listed []string // the devices it does list
}

func (e *NotListedError) Error() string {
	return fmt.Sprintf("libibverbs lists %d devices %v, not this one", len(e.Listed), e.Listed)
}

// LoadError says why libibverbs could not be used: the library is not
// there (Symbol empty), or it lacks a function the sniffer needs.
type LoadError struct {
	Path   string
	Symbol string
	Err    error
}

func (e *LoadError) Error() string {
	if e.Symbol != "" {
		return fmt.Sprintf("%s lacks %s (too old, or not rdma-core's libibverbs)", e.Path, e.Symbol)
	}
	if msg := e.Err.Error(); strings.Contains(msg, e.Path) {
		return msg // dlerror names the file
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *LoadError) Unwrap() error { return e.Err }
