package decode

import (
	"net/netip"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the frame as one JSON object of the decode contract
// (design.md, "ibanalyze decode --json"), without a newline. Keys are
// snake_case, times integer ns, and absent headers are absent keys. errMsg,
// when not empty, becomes the "error" key. It appends into dst without
// building maps, so printing millions of frames stays cheap; each header
// writes its own keys (fieldTable).
func (f *Frame) AppendJSON(dst []byte, errMsg string) []byte {
	dst = append(dst, `{"frame":`...)
	dst = strconv.AppendInt(dst, int64(f.Number), 10)
	if !f.NoTs {
		dst = appendInt(dst, "ts_ns", f.TsNs)
	}
	dst = appendInt(dst, "len", int64(f.WireLen))
	if f.Transport != TransportNone {
		dst = appendStr(dst, "transport", f.Transport.String())
	}
	for _, h := range fieldTable {
		if f.Has&h.has != 0 {
			dst = h.json(dst, f)
		}
	}
	if errMsg != "" {
		dst = appendStr(dst, "error", errMsg)
	}
	return append(dst, '}')
}

func appendKey(dst []byte, key string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendInt(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(dst, key), v, 10)
}

func appendBool(dst []byte, key string, v bool) []byte {
	return strconv.AppendBool(appendKey(dst, key), v)
}

func appendAddr(dst []byte, key string, a netip.Addr) []byte {
	dst = append(appendKey(dst, key), '"')
	dst = a.AppendTo(dst)
	return append(dst, '"')
}

// appendStr appends `,"key":` and s as a JSON string (appendJSONText).
func appendStr(dst []byte, key, s string) []byte {
	return appendJSONText(appendKey(dst, key), s)
}

// appendJSONText appends s as a JSON string; names, messages and the MADs'
// text (the IBA has NodeDescription in UTF-8) are ASCII in practice, but
// control characters are escaped and invalid UTF-8 replaced all the same.
// It takes a string or bytes so that neither has to be copied into the other.
func appendJSONText[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			default:
				dst = append(dst, `\u00`...)
				dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xF])
			}
			i++
			continue
		}
		// At most UTFMax bytes: a conversion that short stays on the stack.
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
