package wire

import (
	"errors"
	"strings"
	"testing"
)

// FuzzVerify checks Verify against any header, secret and body: it never
// panics, returns nil, ErrNotSigned or an error wrapping
// ErrSignatureMismatch, accepts exactly what a recomputed signature with
// the header's method matches (so no header forges a signature), and
// accepts whatever Sign returns. Seeds are in testdata/fuzz/FuzzVerify.
func FuzzVerify(f *testing.F) {
	for _, s := range []struct{ header, secret, body string }{
		{"sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8", "key", "The quick brown fox jumps over the lazy dog"},
		{"SHA1=de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9", "key", "The quick brown fox jumps over the lazy dog"},
		{"", "s", "b"},
		{"=", "", ""},
		{"sha512=", "", ""},
		{" sha384=zz ", "k", "<urlset/>"},
	} {
		f.Add(s.header, s.secret, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, header, secret string, body []byte) {
		err := Verify(header, secret, body)
		switch {
		case err == nil, errors.Is(err, ErrNotSigned), errors.Is(err, ErrSignatureMismatch):
		default:
			t.Fatalf("Verify(%q) = %v: neither ErrNotSigned nor ErrSignatureMismatch", header, err)
		}
		if errors.Is(err, ErrNotSigned) != (strings.TrimSpace(header) == "") {
			t.Fatalf("Verify(%q) = %v", header, err)
		}
		if err == nil {
			method, sig, _ := strings.Cut(strings.TrimSpace(header), "=")
			want, serr := Sign(method, secret, body)
			if serr != nil || method == "" || !strings.EqualFold(want, strings.ToLower(method)+"="+sig) {
				t.Fatalf("Verify accepted %q; Sign gives %q (%v)", header, want, serr)
			}
		}
		for _, m := range []string{"sha1", "sha256", "sha384", "sha512"} {
			sig, err := Sign(m, secret, body)
			if err != nil {
				t.Fatal(err)
			}
			if err := Verify(sig, secret, body); err != nil {
				t.Fatalf("Verify refuses Sign's %s: %v", sig, err)
			}
		}
	})
}
