package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCheck_RefusesNonGlobalClasses(t *testing.T) {
	tests := []struct {
		addr  string
		class string // "" means accepted
	}{
		// IPv4
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"169.254.1.1", "link-local"},
		{"169.254.169.254", "cloud metadata"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.255", "CGNAT"},
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"192.169.0.1", ""},
		// IPv6
		{"::1", "loopback"},
		{"::", "unspecified"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"ff02::1", "multicast"},
		{"fd00:ec2::254", "cloud metadata"},
		{"2001:4860:4860::8888", ""},
		{"2606:4700::1111", ""},
		// IPv4-mapped IPv6
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:192.168.0.1", "private"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"::ffff:169.254.0.9", "link-local"},
		{"::ffff:100.64.1.1", "CGNAT"},
		{"::ffff:224.0.0.1", "multicast"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"::ffff:255.255.255.255", "broadcast"},
		{"::ffff:8.8.8.8", ""},
		// NAT64 carrying IPv4
		{"64:ff9b::127.0.0.1", "loopback"},
		{"64:ff9b::169.254.169.254", "cloud metadata"},
		{"64:ff9b::8.8.8.8", ""},
	}
	var p Policy
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := p.Check(netip.MustParseAddr(tt.addr))
			if tt.class == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want accepted", tt.addr, err)
				}
				return
			}
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("Check(%s) = %v, want *RefusedError", tt.addr, err)
			}
			if re.Class != tt.class {
				t.Errorf("Check(%s) class = %q, want %q", tt.addr, re.Class, tt.class)
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("Check(%s) error does not match ErrRefused", tt.addr)
			}
			if msg := err.Error(); !strings.Contains(msg, netip.MustParseAddr(tt.addr).String()) || !strings.Contains(msg, tt.class) {
				t.Errorf("error %q does not name address and class", msg)
			}
		})
	}
}

func TestCheck_AllowListOverrides(t *testing.T) {
	p, err := ParsePolicy([]string{"127.0.0.0/8", " 10.20.0.0/16 ", "fd00::/8", "169.254.169.254", ""})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1", true},
		{"::ffff:127.0.0.1", true}, // mapped form of an allowed v4
		{"10.20.3.4", true},
		{"10.21.0.1", false},
		{"fd00::1", true},
		{"fd00:ec2::254", true}, // inside the allowed fd00::/8
		{"fc00::1", false},
		{"169.254.169.254", true},
		{"169.254.169.253", false},
		{"::1", false},
		{"192.168.0.1", false},
	}
	for _, tt := range tests {
		err := p.Check(netip.MustParseAddr(tt.addr))
		if (err == nil) != tt.ok {
			t.Errorf("Check(%s) = %v, want ok=%v", tt.addr, err, tt.ok)
		}
	}
}

func TestParsePolicy_RejectsGarbage(t *testing.T) {
	for _, s := range []string{"nonsense", "10.0.0.0/33", "1.2.3"} {
		if _, err := ParsePolicy([]string{s}); err == nil {
			t.Errorf("ParsePolicy(%q) succeeded", s)
		}
	}
}

func TestCheck_InvalidAddressRefused(t *testing.T) {
	if err := (Policy{}).Check(netip.Addr{}); !errors.Is(err, ErrRefused) {
		t.Fatalf("Check(zero) = %v", err)
	}
}

func TestDialControl_ChecksDialledAddress(t *testing.T) {
	var p Policy
	tests := []struct {
		address string
		ok      bool
	}{
		{"127.0.0.1:80", false},
		{"[::1]:443", false},
		{"[::ffff:10.0.0.1]:80", false},
		{"[fe80::1%lo]:80", false},
		{"8.8.8.8:53", true},
		{"[2001:4860:4860::8888]:443", true},
		{"example.invalid:80", false}, // not an address: never dialled by name
	}
	for _, tt := range tests {
		err := p.DialControl("tcp", tt.address, nil)
		if (err == nil) != tt.ok {
			t.Errorf("DialControl(%s) = %v, want ok=%v", tt.address, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("DialControl(%s) error %v does not match ErrRefused", tt.address, err)
		}
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"http://example.org/cb", true},
		{"https://example.org:8443/cb?x=1&y=2", true},
		{"HTTPS://example.org/", true},
		{"http://[2001:db8::1]/cb", true},
		{"ftp://example.org/", false},
		{"file:///etc/passwd", false},
		{"gopher://example.org/", false},
		{"javascript:alert(1)", false},
		{"http:///nohost", false},
		{"http:example.org", false},
		{"https://user:pw@example.org/", false},
		{"https://user@example.org/", false},
		{"/relative/path", false},
		{"http://exa mple.org/", false},
	}
	for _, tt := range tests {
		err := CheckURL(tt.url)
		if (err == nil) != tt.ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
}
