package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestCheckHost_NumericSpellings: every spelling that inet_aton or a
// browser reads as an IPv4 address other than in dotted-decimal form is
// refused, naming the address it reads as; names and canonical literals
// pass.
func TestCheckHost_NumericSpellings(t *testing.T) {
	for _, c := range []struct{ host, readAs string }{
		{"0", "0.0.0.0"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"127.0.0.01", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"010.0.0.1", "8.0.0.1"},
		{"169.254.43518", "169.254.169.254"},
		{"2130706433.", "127.0.0.1"},
		{"0x", "0.0.0.0"},
		{"::127.0.0.1", "127.0.0.1"},
		{"::a9fe:a9fe", "169.254.169.254"},
	} {
		err := CheckHost(c.host)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.readAs) {
			t.Errorf("CheckHost(%q) = %v; want refused, read as %s", c.host, err, c.readAs)
		}
	}
	for _, host := range []string{"256.0.0.1", "1.2.3.4.5", "99999999999", "0x1ffffffff", "08", "example.123", "1.2.3.0x"} {
		if err := CheckHost(host); !errors.Is(err, ErrRefused) {
			t.Errorf("CheckHost(%q) = %v; a host ending in a number that is no address must be refused", host, err)
		}
	}
	for _, host := range []string{"127.0.0.1", "93.184.216.34", "::1", "::", "::ffff:127.0.0.1", "2001:db8::1", "example.org", "example.org.", "0x.example", "1.example", "a1", "xn--nxasmq6b", "localhost", ""} {
		if err := CheckHost(host); err != nil {
			t.Errorf("CheckHost(%q) = %v; want accepted", host, err)
		}
	}
}

// TestCheckURL_RefusesNumericSpellings: the URL check every outgoing
// request passes (delivery, CheckTarget) refuses them too, bracketed IPv6
// included.
func TestCheckURL_RefusesNumericSpellings(t *testing.T) {
	for _, raw := range []string{"http://0/", "http://2130706433/cb", "http://0x7f000001:8080/", "http://0177.0.0.1/", "http://127.1/", "http://[::127.0.0.1]/"} {
		if err := CheckURL(raw); !errors.Is(err, ErrRefused) {
			t.Errorf("CheckURL(%q) = %v; want refused", raw, err)
		}
	}
}

// TestCheck_IPv4CompatibleRefused: the dialler refuses an IPv4-compatible
// IPv6 address (a name may resolve to one) whatever IPv4 address it holds.
func TestCheck_IPv4CompatibleRefused(t *testing.T) {
	if err := (Policy{}).Check(netip.MustParseAddr("::5db8:d822")); !errors.Is(err, ErrRefused) {
		t.Errorf("::93.184.216.34 dialled: %v", err)
	}
}

// TestParseInetAton matches inet_aton(3) on the forms it documents.
func TestParseInetAton(t *testing.T) {
	for in, want := range map[string]string{
		"1.2.3.4": "1.2.3.4", "1.2.772": "1.2.3.4", "1.131844": "1.2.3.4", "16909060": "1.2.3.4",
		"0x1.0x2.0x3.0x4": "1.2.3.4", "01.02.03.04": "1.2.3.4", "4294967295": "255.255.255.255",
	} {
		a, ok := ParseInetAton(in)
		if !ok || a.String() != want {
			t.Errorf("ParseInetAton(%q) = %v %v, want %s", in, a, ok, want)
		}
	}
	for _, in := range []string{"", ".", "1..2", "1.2.3.4.", "256.1", "1.16777216", "4294967296", "09", "0x1g", "+1", "1.-2", " 1"} {
		if a, ok := ParseInetAton(in); ok {
			t.Errorf("ParseInetAton(%q) = %v, want refused", in, a)
		}
	}
}
