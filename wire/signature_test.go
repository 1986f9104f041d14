package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestSign_KnownVectors(t *testing.T) {
	fox := []byte("The quick brown fox jumps over the lazy dog")
	hiThere := []byte("Hi There")
	rfcKey := strings.Repeat("\x0b", 20) // RFC 4231 test case 1 (RFC 2202 for SHA-1)
	tests := []struct {
		method, secret string
		body           []byte
		want           string
	}{
		{"sha1", "key", fox, "sha1=de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9"},
		{"sha256", "key", fox, "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		{"", "key", fox, "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		{"SHA256", "key", fox, "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		{"sha384", "key", fox, "sha384=d7f4727e2c0b39ae0f1e40cc96f60242d5b7801841cea6fc592c5d3e1ae50700582a96cf35e1e554995fe4e03381c237"},
		{"sha512", "key", fox, "sha512=b42af09057bac1e2d41708e48a902e09b5ff7f12ab428a4fe86653c73dd248fb82f948a549f7b791a5b41915ee4d1ec3935357e4e2317250d0372afa2ebeeb3a"},
		{"sha1", rfcKey, hiThere, "sha1=b617318655057264e28bc0b6fb378c8ef146be00"},
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
		if err := Verify(got, tt.secret, tt.body); err != nil {
			t.Errorf("Verify refuses its own %s signature: %v", tt.method, err)
		}
	}
}

func TestSign_UnknownMethodIsAnError(t *testing.T) {
	for _, m := range []string{"md5", "sha-256", " sha256", "sha224"} {
		if _, err := Sign(m, "k", nil); err == nil {
			t.Errorf("Sign(%q) succeeded", m)
		}
	}
	if ValidSigMethod("md5") || ValidSigMethod("") || ValidSigMethod("SHA256") || !ValidSigMethod("sha384") {
		t.Fatal("ValidSigMethod wrong")
	}
}

// TestVerify_Contract pins the one contract of X-Hub-Signature: method in
// any case, hex in any case, white space around the value ignored, an
// empty value is ErrNotSigned and every other failure ErrSignatureMismatch.
func TestVerify_Contract(t *testing.T) {
	body := []byte("<urlset/>")
	sig, _ := Sign("sha256", "s3cret", body)
	hexPart := strings.TrimPrefix(sig, "sha256=")
	tests := []struct {
		name, header, secret string
		body                 []byte
		want                 error
	}{
		{"as signed", sig, "s3cret", body, nil},
		{"method in upper case", "SHA256=" + hexPart, "s3cret", body, nil},
		{"method in mixed case", "Sha256=" + hexPart, "s3cret", body, nil},
		{"hex in upper case", "sha256=" + strings.ToUpper(hexPart), "s3cret", body, nil},
		{"leading space", " " + sig, "s3cret", body, nil},
		{"surrounding white space", "\t" + sig + " \r\n", "s3cret", body, nil},
		{"empty", "", "s3cret", body, ErrNotSigned},
		{"only spaces", "   ", "s3cret", body, ErrNotSigned},
		{"other body", sig, "s3cret", []byte("<urlset />"), ErrSignatureMismatch},
		{"other secret", sig, "s3cret!", body, ErrSignatureMismatch},
		{"no method", hexPart, "s3cret", body, ErrSignatureMismatch},
		{"empty method", "=" + hexPart, "s3cret", body, ErrSignatureMismatch},
		{"wrong method", "sha1=" + hexPart, "s3cret", body, ErrSignatureMismatch},
		{"unknown method", "md5=00", "s3cret", body, ErrSignatureMismatch},
		{"not hex", "sha256=zz", "s3cret", body, ErrSignatureMismatch},
		{"space inside", "sha256 =" + hexPart, "s3cret", body, ErrSignatureMismatch},
		{"truncated", sig[:len(sig)-2], "s3cret", body, ErrSignatureMismatch},
		{"empty signature", "sha256=", "s3cret", body, ErrSignatureMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.header, tt.secret, tt.body)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Verify(%q) = %v, want %v", tt.header, err, tt.want)
			}
			if errors.Is(err, ErrNotSigned) && errors.Is(err, ErrSignatureMismatch) {
				t.Fatal("both errors")
			}
		})
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
