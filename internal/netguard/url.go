package netguard

import (
	"fmt"
	"net/url"
	"strings"
)

// CheckURL rejects URLs the hub must never fetch or POST to: schemes other
// than http and https, URLs without a host, URLs carrying userinfo, and
// hosts CheckHost refuses. It does not resolve the host; the dialer checks
// addresses.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("netguard: bad URL %q: %w", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return fmt.Errorf("netguard: URL %q: scheme %q is not http or https: %w", raw, u.Scheme, ErrRefused)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return fmt.Errorf("netguard: URL %q has no host: %w", raw, ErrRefused)
	}
	if u.User != nil {
		return fmt.Errorf("netguard: URL %q carries userinfo: %w", raw, ErrRefused)
	}
	return CheckHost(u.Hostname())
}
