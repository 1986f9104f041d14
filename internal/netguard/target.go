package netguard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Resolver looks up a host's addresses; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// lookupTimeout bounds the name resolution of CheckTarget.
const lookupTimeout = 2 * time.Second

// CheckTarget decides at request time what the dialler would decide later,
// as far as it can be decided now: the URL must pass CheckURL, and the host
// must not be, or resolve only to, addresses the policy refuses. A host
// that does not resolve now is not refused (it may resolve later); the
// dialler checks every address it connects to whatever CheckTarget said.
// r may be nil for net.DefaultResolver.
func (p Policy) CheckTarget(ctx context.Context, r Resolver, raw string) error {
	if err := CheckURL(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	host := strings.TrimSuffix(u.Hostname(), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return p.Check(a)
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		// RFC 6761: always loopback, whatever a resolver says
		return p.Check(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	var first error
	for _, a := range addrs {
		err := p.Check(a)
		if err == nil {
			return nil
		}
		first = cmp.Or(first, err)
	}
	var re *RefusedError
	if errors.As(first, &re) {
		return fmt.Errorf("%s resolves only to refused addresses (%s is a %s address): %w", host, re.Addr, re.Class, ErrRefused)
	}
	return first
}
