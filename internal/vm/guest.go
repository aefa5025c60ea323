package vm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// GuestShare is where the guest sees the writable share (Guest.Share on
// the host).
const GuestShare = "/tmp/share"

// Config says what to boot.
type Config struct {
	Kernel  *Kernel
	Modules []string // loaded, with their dependencies, before the guest runs anything
	Dir     string   // host folder for the initramfs, console log, control socket and share
	MemMiB  int      // 1024 when 0
	CPUs    int      // 2 when 0
	// BootTimeout bounds each attempt to boot to the command loop (TCG on a
	// loaded 2-core machine: allow minutes). KVMTimeout bounds the KVM
	// attempt, which on a host whose KVM cannot run a stock kernel hangs.
	BootTimeout, KVMTimeout time.Duration
}

// Guest is a booted VM running a command loop.
type Guest struct {
	Accel   string // kvm or tcg: what booted
	Console string // host path of the guest's console output
	Share   string // host path of the guest's GuestShare
	Boot    time.Duration
	Tried   []string // why each earlier way of booting did not

	cmd  *exec.Cmd
	conn net.Conn
	rd   *bufio.Reader
	seq  int
	mu   sync.Mutex
	done chan struct{}
	werr error
}

// initScript runs as the guest's PID 1: it loads the modules, mounts the
// host's root read-only with tmpfs over the folders programs write to,
// mounts the share, and then runs each script the host names on the
// control line (ttyS1, "N SECONDS") chrooted into the host's root, killed
// after SECONDS (exit 124), answering "done N RC".
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in /m/*.ko; do insmod "$m" || echo "vm init: insmod $m failed"; done
echo "vm init: $(ls /m | wc -l) modules loaded"
mkdir -p /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose root /newroot || echo "vm init: mount root failed"
for d in tmp run var; do mount -t tmpfs tmpfs /newroot/$d; done
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/tmp/share
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 share /newroot/tmp/share || echo "vm init: mount share failed"
stty -F /dev/ttyS1 raw -echo
exec 3<>/dev/ttyS1
echo "vm init: ready for commands on ttyS1"
echo ready >&3
while read -r n secs <&3; do
  chroot /newroot /usr/bin/timeout -k 5 "$secs" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp \
    /bin/bash /tmp/share/cmd-$n.sh </dev/null >/newroot/tmp/share/out-$n 2>&1
  echo "done $n $?" >&3
done
poweroff -f
`

// Boot builds the initramfs and boots the guest: with KVM first when
// /dev/kvm can be opened, falling back to software emulation (TCG) when
// KVM does not reach the command loop in time.
func Boot(c Config) (*Guest, error) {
	if c.MemMiB == 0 {
		c.MemMiB = 1024
	}
	if c.CPUs == 0 {
		c.CPUs = 2
	}
	qemu, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return nil, fmt.Errorf("no qemu-system-x86_64 (Debian package qemu-system-x86): %w", err)
	}
	initrd := filepath.Join(c.Dir, "initramfs.cpio")
	if err := buildInitramfs(initrd, c.Kernel, c.Modules); err != nil {
		return nil, err
	}
	var tried []string
	accels := []string{"tcg"}
	if f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0); err == nil {
		f.Close()
		accels = []string{"kvm", "tcg"}
	} else {
		tried = append(tried, fmt.Sprintf("kvm: %v", err))
	}
	for _, a := range accels {
		timeout := c.BootTimeout
		if a == "kvm" && c.KVMTimeout > 0 {
			timeout = c.KVMTimeout
		}
		g, err := boot(qemu, c, initrd, a, timeout)
		if err == nil {
			g.Tried = tried
			return g, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", a, err))
	}
	return nil, fmt.Errorf("the guest did not boot (%s)", strings.Join(tried, "; "))
}

func buildInitramfs(path string, k *Kernel, modules []string) error {
	order, err := k.ModuleOrder(modules...)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	defer f.Close()
	c := newCPIO(f)
	for _, d := range []string{"bin", "dev", "proc", "sys", "m", "newroot"} {
		c.Dir(d)
	}
	c.CopyFile("bin/busybox", 0o755, "/bin/busybox")
	c.File("init", 0o755, []byte(initScript))
	for i, p := range order {
		c.CopyFile(fmt.Sprintf("m/%03d-%s", i, filepath.Base(p)), 0o644, p)
	}
	if err := c.Close(); err != nil {
		return fmt.Errorf("initramfs %s: %w", path, err)
	}
	return nil
}

func boot(qemu string, c Config, initrd, accel string, timeout time.Duration) (*Guest, error) {
	share := filepath.Join(c.Dir, "share")
	if err := os.MkdirAll(share, 0o755); err != nil {
		return nil, fmt.Errorf("share: %w", err)
	}
	sock := filepath.Join(c.Dir, "ctl-"+accel+".sock")
	console := filepath.Join(c.Dir, "console-"+accel+".log")
	os.Remove(sock)
	cpu := "max"
	if accel == "kvm" {
		cpu = "host"
	}
	args := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-machine", "pc", "-accel", accel, "-cpu", cpu,
		"-m", strconv.Itoa(c.MemMiB), "-smp", strconv.Itoa(c.CPUs),
		"-kernel", c.Kernel.Image(), "-initrd", initrd,
		"-append", "console=ttyS0 loglevel=4 panic=-1 mitigations=off rdinit=/init",
		"-serial", "file:" + console,
		"-chardev", "socket,id=ctl,path=" + sock + ",server=on,wait=on",
		"-serial", "chardev:ctl",
		"-virtfs", "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path=" + share + ",mount_tag=share,security_model=none",
	}
	g := &Guest{Accel: accel, Console: console, Share: share, done: make(chan struct{})}
	var stderr bytes.Buffer
	g.cmd = exec.Command(qemu, args...)
	g.cmd.Stderr = &stderr
	// A test binary that dies (go test's timeout panics past every
	// cleanup) takes its guest with it.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start qemu: %w", err)
	}
	go func() { g.werr = g.cmd.Wait(); close(g.done) }()
	deadline := start.Add(timeout)
	fail := func(what string) (*Guest, error) {
		g.Close()
		return nil, fmt.Errorf("%s after %v (console %s; qemu: %s)", what, time.Since(start).Round(time.Millisecond), console, strings.TrimSpace(stderr.String()))
	}
	// qemu waits for the control connection before it runs the guest.
	for {
		conn, err := net.Dial("unix", sock)
		if err == nil {
			g.conn = conn
			break
		}
		select {
		case <-g.done:
			return fail(fmt.Sprintf("qemu exited (%v)", g.werr))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fail("no control socket")
		}
	}
	g.rd = bufio.NewReader(g.conn)
	g.conn.SetReadDeadline(deadline)
	for {
		line, err := g.rd.ReadString('\n')
		if err != nil {
			return fail(fmt.Sprintf("no ready line (%v)", err))
		}
		if strings.TrimSpace(line) == "ready" {
			break
		}
	}
	g.Boot = time.Since(start)
	return g, nil
}

// Result is what a script did in the guest.
type Result struct {
	Out  string // stdout and stderr together
	Code int
	Took time.Duration
}

// Run runs script with bash in the guest, chrooted into the host's root;
// the guest kills it after timeout (exit code 124), and the host gives up
// waiting 30 s later.
func (g *Guest) Run(script string, timeout time.Duration) (Result, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	n := g.seq
	name := filepath.Join(g.Share, fmt.Sprintf("cmd-%d.sh", n))
	if err := os.WriteFile(name, []byte(script), 0o644); err != nil {
		return Result{}, fmt.Errorf("write %s: %w", name, err)
	}
	start := time.Now()
	g.conn.SetDeadline(start.Add(timeout + 30*time.Second))
	if _, err := fmt.Fprintf(g.conn, "%d %d\n", n, int(timeout.Seconds())); err != nil {
		return Result{}, fmt.Errorf("send command %d: %w", n, err)
	}
	want := fmt.Sprintf("done %d ", n)
	for {
		line, err := g.rd.ReadString('\n')
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return Result{}, fmt.Errorf("script %s still running after %v", name, timeout)
			}
			return Result{}, fmt.Errorf("script %s: control line: %w", name, err)
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), strings.TrimSpace(want)); ok {
			code, _ := strconv.Atoi(strings.TrimSpace(rest))
			out, err := os.ReadFile(filepath.Join(g.Share, fmt.Sprintf("out-%d", n)))
			if err != nil {
				return Result{}, fmt.Errorf("script %s: output: %w", name, err)
			}
			return Result{Out: string(out), Code: code, Took: time.Since(start)}, nil
		}
	}
}

// Close stops the guest.
func (g *Guest) Close() {
	if g.conn != nil {
		g.conn.Close()
	}
	if g.cmd.Process != nil {
		g.cmd.Process.Kill()
		<-g.done
	}
}
