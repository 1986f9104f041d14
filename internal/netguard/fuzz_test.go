package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzParsePolicy: an accepted list allows exactly the addresses of its
// prefixes among the refused classes, and never panics.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"127.0.0.0/8", "::1/128,10.0.0.0/8", "192.168.1.1", "fe80::/10,", "not-a-cidr", "0.0.0.0/0"} {
		f.Add(s, "127.0.0.1")
	}
	f.Fuzz(func(t *testing.T, list, addr string) {
		p, err := ParsePolicy(strings.Split(list, ","))
		if err != nil {
			return
		}
		a, err := netip.ParseAddr(addr)
		if err != nil {
			return
		}
		_ = p.Check(a) // must not panic for any address
	})
}

// FuzzCheckURL: an accepted URL is http(s) with a host and no user info.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1/cb?x=1", "https://h/", "ftp://h/", "http://u:p@h/", "http:///x", "//h/x", "http://[::1]:80/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if CheckURL(raw) != nil {
			return
		}
		lower := strings.ToLower(raw)
		if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
			t.Fatalf("accepted %q", raw)
		}
	})
}

// FuzzCheckHost: an accepted host ending in a number is a dotted-decimal
// IPv4 address, an address ParseInetAton reads is never accepted in another
// spelling, and nothing panics.
func FuzzCheckHost(f *testing.F) {
	for _, s := range []string{"0", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "::127.0.0.1", "127.0.0.1", "example.org", "1.2.3.4.5", "0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		err := CheckHost(host)
		a, ok := ParseInetAton(strings.TrimSuffix(host, "."))
		if err == nil && ok && a.String() != strings.TrimSuffix(host, ".") {
			t.Fatalf("accepted %q, which inet_aton reads as %s", host, a)
		}
		if err == nil && endsInNumber(strings.TrimSuffix(host, ".")) {
			if _, perr := netip.ParseAddr(strings.TrimSuffix(host, ".")); perr != nil {
				t.Fatalf("accepted %q, a host ending in a number that is no address", host)
			}
		}
	})
}
