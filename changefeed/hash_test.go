package changefeed

import (
	"reflect"
	"strings"
	"testing"
)

const (
	md5hex    = "1584abdf8ebdc9802ac0c6a7402c03b6"
	sha1hex   = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
	sha256hex = "854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"
)

func TestParseHash(t *testing.T) {
	cases := []struct {
		in      string
		strict  bool // valid in Strict mode
		lenient bool // valid in Lenient mode
		n       int
	}{
		{"md5:" + md5hex, true, true, 1},
		{"md5:" + strings.ToUpper(md5hex), true, true, 1},
		{"sha-1:" + sha1hex, true, true, 1},
		{"md5:" + md5hex + " sha-256:" + sha256hex, true, true, 2},
		{"md5:" + md5hex + "\n\t  sha-256:" + sha256hex + " ", true, true, 2},
		{"sha-512:abcd", false, true, 1},
		{"md5:abc", false, true, 1},
		{"md5:" + md5hex[:31] + "g", false, true, 1},
		{"sha-256:f40xZX_x_DFGFDgghgdfb6rtSx-iosjf6735432nklj", false, true, 1},
		{"md5", false, false, 0},
		{":" + md5hex, false, false, 0},
		{"md5:", false, false, 0},
		{"m d5:x", false, false, 0},
		{"md_5:x", false, false, 0},
		{"", false, false, 0},
		{"   ", false, false, 0},
	}
	for _, c := range cases {
		for _, mode := range []Mode{Strict, Lenient} {
			want := c.strict
			if mode == Lenient {
				want = c.lenient
			}
			ds, err := ParseHash(c.in, mode)
			if (err == nil) != want {
				t.Errorf("ParseHash(%q, %s) error %v, want valid=%v", c.in, mode, err, want)
			}
			if err == nil && len(ds) != c.n {
				t.Errorf("ParseHash(%q) = %d digests, want %d", c.in, len(ds), c.n)
			}
		}
	}
	ds, _ := ParseHash("md5:"+md5hex+" sha-256:"+sha256hex, Strict)
	if !reflect.DeepEqual(ds, []Digest{{"md5", md5hex}, {"sha-256", sha256hex}}) {
		t.Fatalf("digests %+v", ds)
	}
}

func FuzzHash(f *testing.F) {
	f.Add("md5:" + md5hex + " sha-256:" + sha256hex)
	f.Add("sha-1:" + sha1hex)
	f.Add("x:y z:w")
	f.Add(":")
	f.Fuzz(func(t *testing.T, s string) {
		for _, mode := range []Mode{Strict, Lenient} {
			ds, err := ParseHash(s, mode)
			if err != nil {
				continue
			}
			if len(ds) == 0 {
				t.Fatalf("%q accepted with no digest", s)
			}
			parts := make([]string, len(ds))
			for i, d := range ds {
				parts[i] = d.Alg + ":" + d.Digest
			}
			again, err := ParseHash(strings.Join(parts, " "), mode)
			if err != nil || !reflect.DeepEqual(again, ds) {
				t.Fatalf("%q: rejoined %v, %v", s, again, err)
			}
		}
		// Strict never accepts what Lenient rejects.
		if _, err := ParseHash(s, Strict); err == nil {
			if _, err := ParseHash(s, Lenient); err != nil {
				t.Fatalf("%q strict ok, lenient %v", s, err)
			}
		}
	})
}
