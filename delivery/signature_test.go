package delivery

import (
	"strings"
	"testing"
)

func TestSign_KnownVectors(t *testing.T) {
	fox := []byte("The quick brown fox jumps over the lazy dog")
	hiThere := []byte("Hi There")
	rfcKey := strings.Repeat("\x0b", 20) // RFC 4231 test case 1
	tests := []struct {
		method, secret string
		body           []byte
		want           string
	}{
		{"sha1", "key", fox, "sha1=de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9"},
		{"sha256", "key", fox, "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		{"", "key", fox, "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		{"sha384", "key", fox, "sha384=d7f4727e2c0b39ae0f1e40cc96f60242d5b7801841cea6fc592c5d3e1ae50700582a96cf35e1e554995fe4e03381c237"},
		{"sha512", "key", fox, "sha512=b42af09057bac1e2d41708e48a902e09b5ff7f12ab428a4fe86653c73dd248fb82f948a549f7b791a5b41915ee4d1ec3935357e4e2317250d0372afa2ebeeb3a"},
		{"sha256", rfcKey, hiThere, "sha256=b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{"sha384", rfcKey, hiThere, "sha384=afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6"},
		{"sha512", rfcKey, hiThere, "sha512=87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"},
	}
	for _, tt := range tests {
		got, err := Sign(tt.method, tt.secret, tt.body)
		if err != nil {
			t.Fatalf("Sign(%q): %v", tt.method, err)
		}
		if got != tt.want {
			t.Errorf("Sign(%q) = %s, want %s", tt.method, got, tt.want)
		}
		if !VerifySignature(got, tt.secret, tt.body) {
			t.Errorf("VerifySignature rejects its own %s signature", tt.method)
		}
	}
}

func TestSign_UnknownMethodIsAnError(t *testing.T) {
	if _, err := Sign("md5", "k", nil); err == nil {
		t.Fatal("Sign(md5) succeeded")
	}
	if ValidSigMethod("md5") || !ValidSigMethod("sha384") {
		t.Fatal("ValidSigMethod wrong")
	}
}

func TestVerifySignature_RejectsTampering(t *testing.T) {
	body := []byte("<urlset/>")
	sig, _ := Sign("sha256", "s3cret", body)
	tests := map[string]struct {
		header, secret string
		body           []byte
	}{
		"other body":     {sig, "s3cret", []byte("<urlset />")},
		"other secret":   {sig, "s3cret!", body},
		"no method":      {strings.TrimPrefix(sig, "sha256="), "s3cret", body},
		"wrong method":   {"sha1=" + strings.TrimPrefix(sig, "sha256="), "s3cret", body},
		"unknown method": {"md5=00", "s3cret", body},
		"not hex":        {"sha256=zz", "s3cret", body},
		"empty":          {"", "s3cret", body},
	}
	for name, tt := range tests {
		if VerifySignature(tt.header, tt.secret, tt.body) {
			t.Errorf("%s: accepted", name)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	body := []byte(strings.Repeat("<url><loc>http://example.org/r</loc></url>", 50)) // ~2 KiB
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sign("sha256", "s3cret", body); err != nil {
			b.Fatal(err)
		}
	}
}
