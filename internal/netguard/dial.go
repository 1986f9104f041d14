package netguard

import (
	"fmt"
	"net/netip"
	"syscall"
)

// DialControl is a net.Dialer Control function that refuses to connect
// unless p.Check accepts the address being dialled. Because it runs after
// name resolution, for every address the dialer tries, it judges the
// address actually connected to, which defeats DNS rebinding.
func (p Policy) DialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: refusing %s %q: not an IP address: %w", network, address, ErrRefused)
	}
	return p.Check(ap.Addr())
}
