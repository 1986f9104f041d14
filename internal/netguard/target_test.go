package netguard

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

// fixedResolver answers every lookup with the same addresses: name
// resolution is the one thing these tests cannot do for real offline.
type fixedResolver map[string][]string

func (f fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range f[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host")
	}
	return out, nil
}

func TestCheckTarget_RefusesWhatTheDiallerWould(t *testing.T) {
	r := fixedResolver{
		"internal.example": {"10.1.2.3"},
		"mixed.example":    {"10.1.2.3", "93.184.216.34"},
		"public.example":   {"93.184.216.34"},
	}
	loopOK, err := ParsePolicy([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		policy  Policy
		url     string
		refused bool
	}{
		{"loopback literal", Policy{}, "http://127.0.0.1:8080/cb", true},
		{"loopback allowed", loopOK, "http://127.0.0.1:8080/cb", false},
		{"ipv6 loopback", Policy{}, "http://[::1]/cb", true},
		{"mapped loopback", Policy{}, "http://[::ffff:127.0.0.1]/cb", true},
		{"metadata", Policy{}, "http://169.254.169.254/latest", true},
		{"localhost name", Policy{}, "http://localhost:9/cb", true},
		{"localhost subdomain", Policy{}, "http://a.localhost./cb", true},
		{"private by name", Policy{}, "http://internal.example/cb", true},
		{"one public address suffices", Policy{}, "http://mixed.example/cb", false},
		{"public", Policy{}, "https://public.example/cb", false},
		{"unresolvable now: the dialler decides", Policy{}, "https://nowhere.example/cb", false},
		{"scheme", Policy{}, "ftp://public.example/cb", true},
		{"userinfo", Policy{}, "http://u:p@public.example/cb", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.policy.CheckTarget(context.Background(), r, c.url)
			if got := err != nil; got != c.refused {
				t.Fatalf("CheckTarget(%q) = %v, want refused=%v", c.url, err, c.refused)
			}
			if err != nil && !errors.Is(err, ErrRefused) {
				t.Fatalf("refusal %v does not match ErrRefused", err)
			}
		})
	}
}
