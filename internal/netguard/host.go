package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// CheckHost refuses a URL host (as url.URL.Hostname returns it) that other
// software reads as an address other than the one the hub would: Go
// resolves "2130706433", "0x7f000001", "0177.0.0.1" or "127.1" as DNS
// names, while inet_aton, browsers (the WHATWG URL standard) and curl read
// them as IPv4 addresses (all four are 127.0.0.1); and some stacks read an
// IPv4-compatible IPv6 address (RFC 4291, deprecated) such as ::127.0.0.1
// as the IPv4 address it carries. A host whose last label is a number
// (digits, or 0x and hex digits) must be a dotted-decimal IPv4 address
// exactly: anything else is refused, naming the address it reads as when
// it reads as one (HostRefusal). The error matches ErrRefused.
func CheckHost(host string) error {
	if why := HostRefusal(host); why != "" {
		return fmt.Errorf("netguard: %s: %w", why, ErrRefused)
	}
	return nil
}

// HostRefusal returns why CheckHost refuses host, or "" when it accepts it.
func HostRefusal(host string) string {
	h := strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(h); err == nil {
		if v4, ok := ipv4Compatible(a); ok {
			return fmt.Sprintf("host %s is an IPv4-compatible IPv6 address (deprecated, RFC 4291) that some software reads as %s; write %s or ::ffff:%s", host, v4, v4, v4)
		}
		return ""
	}
	if !endsInNumber(h) {
		return ""
	}
	if a, ok := ParseInetAton(h); ok {
		return fmt.Sprintf("host %q is read as the IPv4 address %s by other software (inet_aton, browsers); write it as %s", clipHost(host), a, a)
	}
	return fmt.Sprintf("host %q ends in a number but is not an IPv4 address (write IPv4 addresses as four decimal numbers 0-255)", clipHost(host))
}

// ipv4Compatible reports whether a is an IPv4-compatible IPv6 address
// (::a.b.c.d, other than :: and ::1) and the IPv4 address it carries.
func ipv4Compatible(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a.Is4In6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	for _, x := range b[:12] {
		if x != 0 {
			return netip.Addr{}, false
		}
	}
	v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	if v4.As4() == [4]byte{} || v4.As4() == [4]byte{0, 0, 0, 1} {
		return netip.Addr{}, false // :: and ::1 are what they say
	}
	return v4, true
}

// endsInNumber reports whether host's last label is a number as the WHATWG
// URL standard's "ends in a number" sees it: all decimal digits, or 0x (or
// 0X) followed by hex digits.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if rest, ok := cutHexPrefix(last); ok {
		return strings.Trim(rest, "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// ParseInetAton reads s as inet_aton(3) does: one to four parts separated
// by dots, each decimal, octal (a leading 0) or hexadecimal (a leading 0x);
// the last part fills the bytes the others leave (a: 32 bits, a.b: 8.24,
// a.b.c: 8.8.16). ok is false when s is not such an address.
func ParseInetAton(s string) (addr netip.Addr, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var n [4]uint64
	for i, p := range parts {
		v, ok := parseAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		n[i] = v
	}
	last := len(parts) - 1
	var v uint64
	for i := range last {
		if n[i] > 0xff {
			return netip.Addr{}, false
		}
		v |= n[i] << (24 - 8*i)
	}
	if n[last] >= 1<<(32-8*last) {
		return netip.Addr{}, false
	}
	v |= n[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseAtonPart reads one part of an inet_aton address.
func parseAtonPart(p string) (uint64, bool) {
	base := 10
	if rest, ok := cutHexPrefix(p); ok {
		if rest == "" {
			return 0, true // "0x" is 0 to inet_aton and browsers
		}
		p, base = rest, 16
	} else if len(p) > 1 && p[0] == '0' {
		p, base = p[1:], 8
	}
	if p == "" || p[0] == '+' || p[0] == '-' {
		return 0, false
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}

func cutHexPrefix(p string) (string, bool) {
	if len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') {
		return p[2:], true
	}
	return p, false
}

// clipHost shortens a host for an error message.
func clipHost(h string) string {
	if len(h) > 64 {
		return h[:64] + "…"
	}
	return h
}
