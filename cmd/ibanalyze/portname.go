package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/capfile"
)

// tappedPort names the port a capture was taken at, for plots and the
// report: the name the file gives its interface (pcapng if_name: ibsim's
// tap port "s1/1", ibcap's device), else the file's name without its
// extension ("s1" for s1.pcap).
func tappedPort(path string) string {
	if name := recordedPort(path); name != "" {
		return name
	}
	base := filepath.Base(path)
	for ext := filepath.Ext(base); ext != "" && len(base) > len(ext); ext = filepath.Ext(base) {
		base = strings.TrimSuffix(base, ext) // s1.pcap.gz: s1
	}
	return base
}

// recordedPort is the name the capture file gives its interface (pcapng
// if_name), "" when it gives none or path is not a regular file.
func recordedPort(path string) string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	rd, err := capfile.Open(path)
	if err != nil {
		return ""
	}
	defer rd.Close()
	return rd.InterfaceName()
}

// directionName names one direction of a tapped link by the ERF
// interface convention ibsim and ibcap write: 0 is what the tapped port
// sent, 1 what it received.
func directionName(port string, iface int) string {
	switch iface {
	case 0:
		return "from " + port
	case 1:
		return "to " + port
	}
	return port + " iface " + strconv.Itoa(iface)
}
