package main

import (
	"fmt"
	"os"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/protostate"
	"github.com/spf13/pflag"
)

// rateFlag is --rate (and --width, the lanes of an IB speed named without
// them), one syntax in every command that needs a link's speed
// (protostate.ParseRate): "40G", "100GbE", "25", "HDR", "4x EDR".
type rateFlag struct {
	rate, width string
	flags       *pflag.FlagSet
}

// addRateFlag adds --rate and --width; what says what the rate is for,
// absent what it falls back to.
func addRateFlag(f *pflag.FlagSet, p *rateFlag, what, absent string) {
	p.flags = f
	f.StringVar(&p.rate, "rate", "", "link `RATE` "+what+": "+protostate.RateSyntax+"; default: the capture's recorded speed (pcapng if_speed), else "+absent)
	f.StringVar(&p.width, "width", "4x", "lanes of an IB --rate named without them: 1x, 2x, 4x, 8x, 12x")
}

// given returns the rate --rate names; ok is false without --rate.
func (p *rateFlag) given() (r protostate.Rate, ok bool, err error) {
	widthSet := p.flags != nil && p.flags.Changed("width")
	if p.rate == "" {
		if widthSet {
			return r, false, fmt.Errorf("--width %s goes with an IB --rate (HDR, 4x EDR)", p.width)
		}
		return r, false, nil
	}
	lanes, err := protostate.ParseLinkWidth(p.width)
	if err != nil {
		return r, false, fmt.Errorf("--width: %w", err)
	}
	if r, err = protostate.ParseRate(p.rate, lanes); err != nil {
		return r, false, fmt.Errorf("--rate: %w", err)
	}
	switch {
	case widthSet && r.Lanes == 0:
		return r, false, fmt.Errorf("--width %s goes with an IB --rate name, not with a data rate (--rate %s)", p.width, p.rate)
	case widthSet && r.Lanes != lanes:
		return r, false, fmt.Errorf("--rate %s names %dx, --width %s: give one", p.rate, r.Lanes, p.width)
	}
	return r, true, nil
}

// Where a rate came from, as the reports say it.
const (
	rateFromFlag    = "--rate"
	rateFromCapture = "capture"
)

// resolve returns --rate's rate, else the speed every capture of paths
// records (pcapng if_speed; standard input is not looked at), with where
// it came from; ok is false when neither says.
func (p *rateFlag) resolve(paths []string) (r protostate.Rate, from string, ok bool, err error) {
	if r, ok, err = p.given(); ok || err != nil {
		return r, rateFromFlag, ok, err
	}
	r, ok = recordedRate(paths)
	return r, rateFromCapture, ok, nil
}

// recordedRate is the link speed every file of paths records (pcapng
// if_speed); none when one is standard input or any other file that is
// not a regular one (a FIFO: reading its header here would take it from
// the analysis, which could never read it again), cannot be opened (the
// analysis then says why), records none or they differ.
func recordedRate(paths []string) (protostate.Rate, bool) {
	var bps uint64
	for i, path := range paths {
		if fi, err := os.Stat(path); path == capfile.Stdin || err != nil || !fi.Mode().IsRegular() {
			return protostate.Rate{}, false
		}
		b, err := capfile.RecordedLinkBitsPerSec(path)
		if err != nil || b == 0 || (i > 0 && b != bps) {
			return protostate.Rate{}, false
		}
		bps = b
	}
	return protostate.RateOfBitsPerSec(bps)
}
