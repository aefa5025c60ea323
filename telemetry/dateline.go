package telemetry

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// PerfqueryTimeForms lists the timestamp lines ReadPerfquery takes before
// a snapshot, for help texts and messages: what `date` writes in its
// common forms, and ibscope's own comments.
const PerfqueryTimeForms = `date                 Thu Nov 26 09:10:11 UTC 2026 (also "Thu 26 Nov 2026 09:10:11 AM UTC")
date -R              Thu, 26 Nov 2026 09:10:11 +0000
date -Iseconds/-Ins  2026-11-26T09:10:11+00:00, 2026-11-26T09:10:11,123456789+00:00
date --rfc-3339=ns   2026-11-26 09:10:11.123456789+00:00 (RFC 3339)
date +%s.%N          1795684211.123456789 (seconds since the epoch)
date (en_GB)         Thu 26 Nov 09:10:11 UTC 2026
date '+%F %T'        2026-11-26 09:10:11 (no zone: this machine's local time, with a warning)
# ts=SECONDS, # ts_ns=NANOSECONDS, # ts=RFC3339
A zone given by name (CET, EST) is taken only where it is the local zone's
name at that time; elsewhere use date -u, -R or -I, which say the offset.`

// dateLayouts are the forms of `date` output read, with a zone: the C
// locale's default (day of month space-padded or not), en_US's, en_GB's,
// -R's.
var dateLayouts = []string{
	"Mon Jan _2 15:04:05 MST 2006",
	"Mon Jan 2 15:04:05 MST 2006",
	"Mon 02 Jan 2006 03:04:05 PM MST",
	"Mon 2 Jan 2006 03:04:05 PM MST",
	"Mon Jan _2 03:04:05 PM MST 2006",
	"Mon _2 Jan 15:04:05 MST 2006",
	"Mon 02 Jan 2006 15:04:05 MST",
	"Mon, 02 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon Jan _2 15:04:05.999999999 MST 2006",
}

// zonelessLayouts are forms that say no zone: `date '+%F %T'` (and with a
// 'T', or a fraction), and the C library's asctime. They are read in the
// local zone, as the machine that wrote them most likely had it, and the
// reader warns once that it assumed so.
var zonelessLayouts = []string{
	"2006-01-02T15:04:05.999999999",
	"Mon Jan _2 15:04:05 2006",
}

// parseDateLine reads one line of `date` output in any of the forms above
// (RFC 3339 with a 'T' or a space, a ',' before the fraction accepted).
// matched says the line looks like a date; err then says why it is not
// taken (a zone name this machine cannot place); zoneless says it named
// no zone and was read as local time.
func parseDateLine(t []byte) (ns int64, matched, zoneless bool, err error) {
	s := strings.Join(strings.Fields(string(t)), " ")
	if len(s) < 19 || len(s) > 64 {
		return 0, false, false, nil
	}
	if s[4] == '-' && s[7] == '-' && (s[10] == 'T' || s[10] == ' ') {
		u := []byte(strings.Replace(s, ",", ".", 1))
		u[10] = 'T'
		if tm, err := time.Parse(time.RFC3339Nano, string(u)); err == nil {
			ns, err := nsSinceEpoch(s, tm)
			return ns, true, false, err
		}
		if tm, err := time.ParseInLocation(zonelessLayouts[0], string(u), time.Local); err == nil {
			ns, err := nsSinceEpoch(s, tm)
			return ns, true, true, err
		}
		return 0, false, false, nil
	}
	if tm, err := time.ParseInLocation(zonelessLayouts[1], s, time.Local); err == nil {
		ns, err := nsSinceEpoch(s, tm)
		return ns, true, true, err
	}
	for _, layout := range dateLayouts {
		tm, perr := time.ParseInLocation(layout, s, time.Local)
		if perr != nil {
			continue
		}
		if strings.Contains(layout, "MST") {
			name, off := tm.Zone()
			if off == 0 && name != "UTC" && name != "GMT" && name != "UT" && !localZoneIs(tm, name) {
				return 0, true, false, fmt.Errorf("date %q names zone %s, which is not this machine's zone at that time: its offset is unknown; save `date -u`, `date -R` or `date -Iseconds`, which say it", s, name)
			}
		}
		ns, err := nsSinceEpoch(s, tm)
		return ns, true, false, err
	}
	return 0, false, false, nil
}

// nsSinceEpoch is tm in ns since the Unix epoch. UnixNano is undefined
// outside int64's ns (1677 to 2262): "# ts=3000-01-01T00:00:00Z" stamped a
// snapshot before 1970 without a word; such a date is refused, as a
// ts_ns past int64 is.
func nsSinceEpoch(s string, tm time.Time) (int64, error) {
	if tm.Before(time.Unix(0, math.MinInt64)) || tm.After(time.Unix(0, math.MaxInt64)) {
		return 0, fmt.Errorf("date %q: want a time from 1678 to 2261 (nanoseconds since the epoch hold no other)", s)
	}
	return tm.UnixNano(), nil
}

// localZoneIs reports whether the local zone is called name (with offset
// 0) at the time tm: then the parsed time is right as it stands.
func localZoneIs(tm time.Time, name string) bool {
	n, off := tm.In(time.Local).Zone()
	return n == name && off == 0
}
