package changefeed

import (
	"unicode/utf8"
)

// Character classes of the tokenizer, by byte. Non-ASCII bytes are handled
// by decoding the rune.
const (
	ccInvalid  = 0 // C0 control other than tab, LF, CR
	ccPlain    = 1
	ccSpace    = 2 // tab, LF, CR, space
	ccNameChar = 4 // may continue a name
	ccNameOK   = 8 // may start a name
	ccHigh     = 16
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 0x80:
			t[c] = ccHigh
		case c == '\t' || c == '\n' || c == '\r' || c == ' ':
			t[c] = ccSpace
		case c < 0x20:
			t[c] = ccInvalid
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
			t[c] = ccPlain | ccNameChar | ccNameOK
		case c >= '0' && c <= '9', c == '-', c == '.':
			t[c] = ccPlain | ccNameChar
		default:
			t[c] = ccPlain
		}
	}
	return t
}()

// isXMLChar reports whether r is a Char of XML 1.0.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// isNameStartRune and isNameRune implement NameStartChar and NameChar of XML
// 1.0 fifth edition for non-ASCII runes.
func isNameStartRune(r rune) bool {
	return r >= 0xC0 && r <= 0xD6 || r >= 0xD8 && r <= 0xF6 || r >= 0xF8 && r <= 0x2FF ||
		r >= 0x370 && r <= 0x37D || r >= 0x37F && r <= 0x1FFF || r >= 0x200C && r <= 0x200D ||
		r >= 0x2070 && r <= 0x218F || r >= 0x2C00 && r <= 0x2FEF || r >= 0x3001 && r <= 0xD7FF ||
		r >= 0xF900 && r <= 0xFDCF || r >= 0xFDF0 && r <= 0xFFFD || r >= 0x10000 && r <= 0xEFFFF
}

func isNameRune(r rune) bool {
	return isNameStartRune(r) || r == 0xB7 || r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}

// checkChars reports the offset of the first byte of b that is not an XML
// Char in valid UTF-8, or -1.
func checkChars(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			if charClass[c] == ccInvalid {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || !isXMLChar(r) {
			return i
		}
		i += size
	}
	return -1
}

// isName reports whether b is an XML Name (colons allowed).
func isName(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			cl := charClass[c]
			if i == 0 && cl&ccNameOK == 0 || cl&ccNameChar == 0 {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		if i == 0 && !isNameStartRune(r) || i > 0 && !isNameRune(r) {
			return false
		}
		i += size
	}
	return true
}

// isNCName reports whether s is a Name without colons.
func isNCName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return false
		}
	}
	return isName([]byte(s))
}

// decodeEntity decodes the reference starting at b[0] == '&' and returns the
// rune and the reference's length, or ok false.
func decodeEntity(b []byte) (r rune, n int, ok bool) {
	semi := -1
	for i := 1; i < len(b) && i < 12; i++ {
		if b[i] == ';' {
			semi = i
			break
		}
	}
	if semi < 0 {
		return 0, 0, false
	}
	name := b[1:semi]
	switch string(name) {
	case "lt":
		return '<', semi + 1, true
	case "gt":
		return '>', semi + 1, true
	case "amp":
		return '&', semi + 1, true
	case "apos":
		return '\'', semi + 1, true
	case "quot":
		return '"', semi + 1, true
	}
	if len(name) < 2 || name[0] != '#' {
		return 0, 0, false
	}
	v := 0
	if name[1] == 'x' {
		if len(name) < 3 {
			return 0, 0, false
		}
		for _, c := range name[2:] {
			var d int
			switch {
			case c >= '0' && c <= '9':
				d = int(c - '0')
			case c >= 'a' && c <= 'f':
				d = int(c-'a') + 10
			case c >= 'A' && c <= 'F':
				d = int(c-'A') + 10
			default:
				return 0, 0, false
			}
			v = v*16 + d
		}
	} else {
		for _, c := range name[1:] {
			if c < '0' || c > '9' {
				return 0, 0, false
			}
			v = v*10 + int(c-'0')
		}
	}
	if v > 0x10FFFF || !isXMLChar(rune(v)) {
		return 0, 0, false
	}
	return rune(v), semi + 1, true
}

// unescape appends the character data of raw to dst, resolving references
// and normalising line ends (CRLF and CR to LF). In attribute values
// (attr true) tab, LF and CR are then replaced by a space, as XML's
// attribute-value normalisation requires for CDATA-typed attributes. It
// returns the offset of an invalid reference, or -1.
func unescape(dst, raw []byte, attr bool) ([]byte, int) {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch c {
		case '&':
			r, n, ok := decodeEntity(raw[i:])
			if !ok {
				return dst, i
			}
			dst = utf8.AppendRune(dst, r)
			i += n
			continue
		case '\r':
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
			c = '\n'
		}
		if attr && (c == '\n' || c == '\t') {
			c = ' '
		}
		dst = append(dst, c)
		i++
	}
	return dst, -1
}
