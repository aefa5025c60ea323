package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Kernel is an unpacked Debian kernel package.
type Kernel struct {
	Version string // uname -r, e.g. 6.1.0-56-amd64
	Root    string // where the package was unpacked (boot/, lib/modules/)
}

// Image is the kernel image to boot.
func (k *Kernel) Image() string { return filepath.Join(k.Root, "boot", "vmlinuz-"+k.Version) }

// ModuleDir is the folder of the kernel's modules.
func (k *Kernel) ModuleDir() string { return filepath.Join(k.Root, "lib", "modules", k.Version) }

// CacheDir is where the kernel package is kept between runs:
// $IBSCOPE_VM_CACHE, else $XDG_CACHE_HOME/ibscope-vm, else ~/.cache/ibscope-vm.
func CacheDir() (string, error) {
	if d := os.Getenv("IBSCOPE_VM_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the VM kernel: %w", err)
	}
	return filepath.Join(d, "ibscope-vm"), nil
}

var kernelPkg = regexp.MustCompile(`Depends: (linux-image-[0-9][^\s]*-amd64)\b`)

// StockKernel resolves the package linux-image-amd64 depends on, downloads
// it with apt-get download and unpacks it with dpkg-deb -x under cache,
// unless an earlier run did.
func StockKernel(cache string) (*Kernel, error) {
	out, err := exec.Command("apt-cache", "depends", "linux-image-amd64").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("apt-cache depends linux-image-amd64: %v: %s", err, out)
	}
	m := kernelPkg.FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("apt-cache depends linux-image-amd64 names no linux-image-VERSION-amd64 package: %s", out)
	}
	pkg := string(m[1])
	k := &Kernel{Version: strings.TrimPrefix(pkg, "linux-image-"), Root: filepath.Join(cache, pkg)}
	done := filepath.Join(k.Root, ".unpacked")
	if _, err := os.Stat(done); err == nil {
		return k, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	dl, err := os.MkdirTemp(cache, "download-")
	if err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	defer os.RemoveAll(dl)
	// apt-get download writes into the working folder; as root it warns
	// that the _apt user cannot write there, which is harmless.
	get := exec.Command("apt-get", "download", "-q", pkg)
	get.Dir = dl
	if out, err := get.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("apt-get download %s: %v: %s", pkg, err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dl, pkg+"_*.deb"))
	if len(debs) != 1 {
		return nil, fmt.Errorf("apt-get download %s left %d .deb files in %s", pkg, len(debs), dl)
	}
	os.RemoveAll(k.Root)
	if out, err := exec.Command("dpkg-deb", "-x", debs[0], k.Root).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("dpkg-deb -x %s: %v: %s", debs[0], err, out)
	}
	if _, err := os.Stat(k.Image()); err != nil {
		return nil, fmt.Errorf("%s holds no kernel image: %w", pkg, err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	return k, nil
}
