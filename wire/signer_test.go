package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cryptoSign is the X-Hub-Signature value crypto/hmac gives.
func cryptoSign(t testing.TB, method, secret string, body []byte) string {
	t.Helper()
	h, ok := sigHash(method)
	if !ok {
		t.Fatalf("no method %q", method)
	}
	mac := hmac.New(h, []byte(secret))
	mac.Write(body)
	return method + "=" + hex.EncodeToString(mac.Sum(nil))
}

// cryptoSignStandard is the webhook-signature value crypto/hmac gives.
func cryptoSignStandard(t testing.TB, secret, msgID string, ts time.Time, body []byte) string {
	t.Helper()
	key, err := StandardKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// One Signer, used for signature after signature, gives what crypto/hmac
// gives for every method, with keys shorter than, as long as and longer
// than a block (hashed first), empty, and bodies of any length; and the
// Standard Webhooks signature of whsec_ and raw secrets.
func TestSigner_IsCryptoHMAC(t *testing.T) {
	var s Signer
	keys := []string{"", "k", "s3cret", strings.Repeat("x", 63), strings.Repeat("y", 64), strings.Repeat("z", 65),
		strings.Repeat("w", 128), strings.Repeat("v", 129), strings.Repeat("\xff", 200)}
	bodies := [][]byte{nil, []byte("a"), []byte(strings.Repeat("<url/>", 1000))}
	for _, m := range sigMethods {
		for _, k := range keys {
			for _, body := range bodies {
				got, err := s.Sign(m.name, k, body)
				if err != nil {
					t.Fatal(err)
				}
				if want := cryptoSign(t, m.name, k, body); got != want {
					t.Fatalf("%s, key of %d bytes, body of %d: %s, want %s", m.name, len(k), len(body), got, want)
				}
			}
		}
	}
	ts := time.Unix(1700000000, 0)
	for _, secret := range append(keys[1:], "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_"+base64.RawStdEncoding.EncodeToString([]byte(strings.Repeat("q", 100)))) {
		for _, body := range bodies {
			got, err := s.SignStandard(secret, "msg_1", ts, body)
			if err != nil {
				t.Fatal(err)
			}
			if want := cryptoSignStandard(t, secret, "msg_1", ts, body); got != want {
				t.Fatalf("Standard, secret %.12q…, body of %d: %s, want %s", secret, len(body), got, want)
			}
		}
	}
	for _, bad := range []string{"whsec_", "whsec_!!!"} {
		if _, err := s.SignStandard(bad, "msg_1", ts, nil); err == nil {
			t.Errorf("SignStandard took the secret %q", bad)
		}
	}
	if got, err := s.SignStandard("s3cret", "msg_2", ts, []byte("b")); err != nil || got != cryptoSignStandard(t, "s3cret", "msg_2", ts, []byte("b")) {
		t.Errorf("after refused secrets, SignStandard gave %s (%v)", got, err)
	}
}

// A Signer in use allocates only the value it returns.
func TestSigner_AllocatesOnlyTheValue(t *testing.T) {
	var s Signer
	body := []byte(strings.Repeat("<url/>", 100))
	ts := time.Unix(1700000000, 0)
	if _, err := s.Sign("sha256", "s3cret", body); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignStandard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", ts, body); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = s.Sign("sha256", "s3cret", body) }); n != 1 {
		t.Errorf("Sign: %v allocations, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		_, _ = s.SignStandard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", ts, body)
	}); n != 1 {
		t.Errorf("SignStandard: %v allocations, want 1", n)
	}
}

// FuzzSigner_IsCryptoHMAC checks a Signer, used twice in a row, against
// crypto/hmac for any key and body.
func FuzzSigner_IsCryptoHMAC(f *testing.F) {
	f.Add(uint8(1), "s3cret", "other", []byte("<urlset/>"))
	f.Add(uint8(3), strings.Repeat("k", 200), "", []byte{})
	f.Fuzz(func(t *testing.T, method uint8, key, key2 string, body []byte) {
		m := sigMethods[int(method)%len(sigMethods)].name
		var s Signer
		for _, k := range []string{key, key2} {
			got, err := s.Sign(m, k, body)
			if err != nil {
				t.Fatal(err)
			}
			if want := cryptoSign(t, m, k, body); got != want {
				t.Fatalf("%s: %s, want %s", m, got, want)
			}
		}
	})
}

func BenchmarkSigner(b *testing.B) {
	body := []byte(strings.Repeat("<url/>", 170)) // ≈ 1 KB
	var s Signer
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sign("sha256", "s3cret", body); err != nil {
			b.Fatal(err)
		}
	}
}
