package telemetry

import (
	"testing"
)

func FuzzDataIDName(f *testing.F) {
	f.Add(uint64(0x1020000200000302))
	f.Fuzz(func(t *testing.T, v uint64) {
		id := DataID(v)
		name := id.Name()
		if back, ok := dataIDFromName(name); ok && back != id {
			if _, known := LookupDataID(id); known {
				t.Fatalf("%s named %q reads back as %s", id, name, back)
			}
		}
	})
}

// FuzzDeltaWrapReset drives the wrap-or-reset rule with any two readings,
// width, unit, kind and interval: it never panics, a reset keeps the later
// reading and no rate, a wrap is modulo 2^Width and within the physical
// bound when the interval is timed, and warnResets names the line.
func FuzzDeltaWrapReset(f *testing.F) {
	f.Add(uint64(1048800), uint64(50), uint8(32), uint8(UnitBytes), false, false, int64(1_000_000), true)
	f.Add(uint64(1048800), uint64(50), uint8(32), uint8(UnitBytes), false, false, int64(1_000_000_000), true)
	f.Add(uint64(0xFFFFFFF0), uint64(0x10), uint8(32), uint8(UnitCount), false, false, int64(0), false)
	f.Add(uint64(900), uint64(4), uint8(32), uint8(UnitTicks), true, false, int64(1), true)
	f.Add(uint64(1<<63), uint64(1), uint8(64), uint8(UnitWords), false, true, int64(-5), true)
	f.Fuzz(func(t *testing.T, prev, cur uint64, width, unit uint8, saturating, clear bool, intervalNs int64, timed bool) {
		c := Counter{Name: "c", Unit: Unit(unit % uint8(len(unitNames))), Width: width%64 + 1, Saturating: saturating, ClearOnSample: clear}
		clock := ClockNone
		if timed {
			clock = ClockHost
		}
		s := NewSeries(Source{}, clock, []Counter{c})
		s.Append(0, 1_000_000_000, 1_000_000_000, []uint64{prev})
		s.Append(1, 1_000_000_000+intervalNs, 1_000_000_000+intervalNs, []uint64{cur})
		s.setLine(0, 2)
		s.setLine(1, 3)
		s.warnResets("fuzz")
		d := s.Delta(1, 0)
		r, _ := s.Rate(1, 0)
		switch {
		case d.Flags&FlagReset != 0:
			if d.Value != cur || r != 0 || d.Flags&FlagWrapped != 0 {
				t.Fatalf("reset %+v rate %v", d, r)
			}
			if !saturating && !clear && len(s.Warnings) == 0 {
				t.Fatalf("reset without a warning: %+v", d)
			}
		case d.Flags&FlagWrapped != 0:
			if c.Width < 64 && d.Value != (cur-prev)&c.Max() {
				t.Fatalf("wrap %+v of %d -> %d width %d", d, prev, cur, c.Width)
			}
			if timed && intervalNs > 0 {
				b, _ := c.ToBase(d.Value)
				bound := maxEventsPerSec
				if u, _ := c.Unit.Base(); u == UnitBytes {
					bound = maxBytesPerSec
				}
				if float64(b) > bound*float64(intervalNs)/1e9*1.000001 {
					t.Fatalf("wrap of %d in %d ns beyond the bound", b, intervalNs)
				}
			}
		}
		for _, w := range s.Warnings {
			if w.Line != 3 || w.File != "fuzz" {
				t.Fatalf("warning not at fuzz:3: %v", w)
			}
		}
	})
}
