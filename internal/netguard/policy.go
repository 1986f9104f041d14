package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrRefused is matched (with errors.Is) by every error that refuses an
// address or a URL.
var ErrRefused = errors.New("netguard: refused")

// RefusedError reports an address that Check refused and the class of
// address it belongs to.
type RefusedError struct {
	Addr  netip.Addr // the address as dialled
	Class string     // e.g. "loopback", "private", "cloud metadata"
}

// Error names the address and its class.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("netguard: refusing %s: %s address", e.Addr, e.Class)
}

// Is reports whether target is ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Policy decides which addresses outgoing requests may reach. The zero
// Policy refuses every non-global address.
type Policy struct {
	// Allow lists prefixes that are reachable even though they belong to a
	// refused class (for example 127.0.0.0/8 in tests, or an internal
	// network of trusted subscribers).
	Allow []netip.Prefix
}

// ParsePolicy builds a Policy from CIDR prefixes such as "10.0.0.0/8" or
// "fd00::/8". A bare address is taken as a single-address prefix.
func ParsePolicy(cidrs []string) (Policy, error) {
	var p Policy
	for _, s := range cidrs {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return Policy{}, fmt.Errorf("netguard: allow %q: %w", s, err)
			}
			a = a.WithZone("")
			p.Allow = append(p.Allow, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		pr, err := netip.ParsePrefix(s)
		if err != nil {
			return Policy{}, fmt.Errorf("netguard: allow %q: %w", s, err)
		}
		p.Allow = append(p.Allow, pr.Masked())
	}
	return p, nil
}

// class is one refused range of addresses.
type class struct {
	prefix netip.Prefix
	name   string
}

// refusedClasses lists the refused ranges, most specific first so that the
// class named in errors is the precise one (metadata before link-local).
func refusedClasses() []class {
	mk := func(s, name string) class { return class{netip.MustParsePrefix(s), name} }
	return []class{
		mk("169.254.169.254/32", "cloud metadata"),
		mk("fd00:ec2::254/128", "cloud metadata"),
		mk("255.255.255.255/32", "broadcast"),
		mk("0.0.0.0/8", "unspecified"),
		mk("::/128", "unspecified"),
		mk("127.0.0.0/8", "loopback"),
		mk("::1/128", "loopback"),
		mk("::/96", "IPv4-compatible IPv6 (deprecated)"),
		mk("10.0.0.0/8", "private"),
		mk("172.16.0.0/12", "private"),
		mk("192.168.0.0/16", "private"),
		mk("fc00::/7", "private"),
		mk("100.64.0.0/10", "CGNAT"),
		mk("169.254.0.0/16", "link-local"),
		mk("fe80::/10", "link-local"),
		mk("224.0.0.0/4", "multicast"),
		mk("ff00::/8", "multicast"),
		mk("240.0.0.0/4", "reserved"),
	}
}

// nat64 is the well-known NAT64 prefix (RFC 6052); an address inside it
// reaches the IPv4 address in its last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Check returns nil when ip may be dialled under p, and a *RefusedError
// naming the address and its class otherwise. IPv4-mapped IPv6 addresses
// (::ffff:a.b.c.d) and NAT64 addresses (64:ff9b::a.b.c.d) are judged by
// the IPv4 address they carry. An invalid address is refused.
func (p Policy) Check(ip netip.Addr) error {
	if !ip.IsValid() {
		return &RefusedError{Addr: ip, Class: "invalid"}
	}
	bare := ip.WithZone("")
	v := bare.Unmap()
	if v.Is6() && nat64.Contains(v) {
		b := v.As16()
		v = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if p.allowed(bare) || p.allowed(v) {
		return nil
	}
	for _, c := range refusedClasses() {
		if c.prefix.Contains(v) {
			return &RefusedError{Addr: ip, Class: c.name}
		}
	}
	return nil
}

func (p Policy) allowed(a netip.Addr) bool {
	for _, pr := range p.Allow {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}
