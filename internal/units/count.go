package units

import "strconv"

// Integer is the integer types a count comes in.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Count is n and noun, the noun made plural with an "s" unless n is 1, as
// tcpdump says "1 packet captured": "1 packet", "0 packets", "3 flows".
// noun is a singular whose plural adds an "s".
func Count[T Integer](n T, noun string) string {
	var s string
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	if n == 1 {
		return s + " " + noun
	}
	return s + " " + noun + "s"
}

// CountVerb is Count and the verb that agrees with it, one for n = 1 and
// many otherwise: "1 packet was", "3 packets were".
func CountVerb[T Integer](n T, noun, one, many string) string {
	if n == 1 {
		return Count(n, noun) + " " + one
	}
	return Count(n, noun) + " " + many
}
