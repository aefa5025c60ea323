package vm

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// modName is a module's name as the kernel spells it: file name without
// .ko, dashes as underscores.
func modName(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(filepath.Base(file), ".ko"), "-", "_")
}

// moduleDeps reads the depends= entry of a module's .modinfo section.
func moduleDeps(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	defer f.Close()
	s := f.Section(".modinfo")
	if s == nil {
		return nil, fmt.Errorf("module %s: no .modinfo section", path)
	}
	data, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("module %s: .modinfo: %w", path, err)
	}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if d, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			var deps []string
			for _, n := range strings.Split(string(d), ",") {
				if n != "" {
					deps = append(deps, modName(n))
				}
			}
			return deps, nil
		}
	}
	return nil, nil
}

// ModuleOrder lists the files of the named modules and of everything they
// depend on, each after its dependencies: the order to insmod them in.
// Modules the kernel has built in are not files and need no loading.
func (k *Kernel) ModuleOrder(names ...string) ([]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(filepath.Join(k.ModuleDir(), "kernel"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".ko") {
			files[modName(p)] = p
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list modules of %s: %w", k.Version, err)
	}
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string, from string) error
	visit = func(n, from string) error {
		switch state[n] {
		case 1:
			return fmt.Errorf("module dependency cycle through %s", n)
		case 2:
			return nil
		}
		p, ok := files[n]
		if !ok {
			return fmt.Errorf("kernel %s has no module %s (wanted by %s)", k.Version, n, from)
		}
		state[n] = 1
		deps, err := moduleDeps(p)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d, n); err != nil {
				return err
			}
		}
		state[n] = 2
		order = append(order, p)
		return nil
	}
	for _, n := range names {
		if err := visit(modName(n), "the bench"); err != nil {
			return nil, err
		}
	}
	return order, nil
}
