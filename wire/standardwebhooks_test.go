package wire

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test vector published with the Standard Webhooks specification.
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignStandard_PublishedVector(t *testing.T) {
	got, err := SignStandard(vecSecret, vecID, time.Unix(vecTS, 0), []byte(vecBody))
	if err != nil || got != vecSig {
		t.Fatalf("SignStandard = %q, %v; want %q", got, err, vecSig)
	}
	ts, err := VerifyStandard(vecSecret, vecID, strconv.Itoa(vecTS), vecSig, []byte(vecBody), time.Unix(vecTS, 0), 0)
	if err != nil || ts.Unix() != vecTS {
		t.Fatalf("VerifyStandard = %v, %v", ts, err)
	}
}

func TestStandardKey_WhsecIsBase64AndOtherSecretsAreRaw(t *testing.T) {
	key, err := StandardKey(vecSecret)
	want, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(vecSecret, "whsec_"))
	if err != nil || !bytes.Equal(key, want) {
		t.Fatalf("whsec_ key %x, %v", key, err)
	}
	if key, err := StandardKey("s3cret"); err != nil || string(key) != "s3cret" {
		t.Fatalf("raw key %q, %v", key, err)
	}
	if key, err := StandardKey("whsec_" + base64.RawStdEncoding.EncodeToString([]byte("k1"))); err != nil || string(key) != "k1" {
		t.Fatalf("unpadded key %q, %v", key, err)
	}
	for _, bad := range []string{"whsec_", "whsec_***", "whsec_a b"} {
		if _, err := StandardKey(bad); err == nil {
			t.Errorf("StandardKey(%q) succeeded", bad)
		}
		if _, err := SignStandard(bad, "m", time.Now(), nil); err == nil {
			t.Errorf("SignStandard(%q) succeeded", bad)
		}
	}
	if _, err := SignStandard("k", "", time.Now(), nil); err == nil {
		t.Error("SignStandard with an empty id succeeded")
	}
}

func TestStandardMessageID_StablePerSubscriptionAndSequence(t *testing.T) {
	id := func(sub string, seq uint64) string { return StandardMessageID(sub, Cursor{Seq: seq}) }
	a := id("00ff", 7)
	if e := StandardMessageID("00ff", Cursor{Epoch: "e1", Seq: 7}); e != "msg_00ff_e1-7" || e == StandardMessageID("00ff", Cursor{Epoch: "e2", Seq: 7}) {
		t.Fatalf("ids with epochs: %q", e)
	}
	if a != "msg_00ff_7" || a != id("00ff", 7) || a == id("00ff", 8) || a == id("00fe", 7) {
		t.Fatalf("ids %q", a)
	}
}

// TestVerifyStandard_Contract pins the verification rules: white space
// around values ignored, several signatures allowed, unknown versions
// skipped, everything else a mismatch, and a valid but old or future
// timestamp stale in both directions.
func TestVerifyStandard_Contract(t *testing.T) {
	body := []byte(vecBody)
	now := time.Unix(vecTS, 0)
	ts := strconv.Itoa(vecTS)
	other, _ := SignStandard("whsec_"+base64.StdEncoding.EncodeToString([]byte("other key")), vecID, now, body)
	tests := []struct {
		name, id, ts, sig string
		body              []byte
		now               time.Time
		tolerance         time.Duration
		want              error
	}{
		{"as signed", vecID, ts, vecSig, body, now, 0, nil},
		{"surrounding white space", " " + vecID + "\t", " " + ts + " ", " " + vecSig + " ", body, now, 0, nil},
		{"several signatures, one matches", vecID, ts, other + " v2,abc " + vecSig, body, now, 0, nil},
		{"unknown version skipped", vecID, ts, "v1a," + strings.TrimPrefix(vecSig, "v1,"), body, now, 0, ErrSignatureMismatch},
		{"malformed entries skipped", vecID, ts, "v1 v1, ,x " + vecSig, body, now, 0, nil},
		{"all empty", "", "", "", body, now, 0, ErrNotSigned},
		{"no id", "", ts, vecSig, body, now, 0, ErrSignatureMismatch},
		{"no timestamp", vecID, "", vecSig, body, now, 0, ErrSignatureMismatch},
		{"no signature", vecID, ts, "", body, now, 0, ErrSignatureMismatch},
		{"timestamp not a number", vecID, "1614265330.0", vecSig, body, now, 0, ErrSignatureMismatch},
		{"timestamp with a plus sign", vecID, "+" + ts, vecSig, body, now, 0, ErrSignatureMismatch},
		{"other id", vecID + "x", ts, vecSig, body, now, 0, ErrSignatureMismatch},
		{"other timestamp", vecID, strconv.Itoa(vecTS + 1), vecSig, body, now, 0, ErrSignatureMismatch},
		{"other body", vecID, ts, vecSig, []byte(`{"test": 2432232315}`), now, 0, ErrSignatureMismatch},
		{"other key", vecID, ts, other, body, now, 0, ErrSignatureMismatch},
		{"signature not base64", vecID, ts, "v1,***", body, now, 0, ErrSignatureMismatch},
		{"just within tolerance, past", vecID, ts, vecSig, body, now.Add(5 * time.Minute), 0, nil},
		{"just within tolerance, future", vecID, ts, vecSig, body, now.Add(-5 * time.Minute), 0, nil},
		{"stale: too old", vecID, ts, vecSig, body, now.Add(5*time.Minute + time.Second), 0, ErrStaleTimestamp},
		{"stale: too new", vecID, ts, vecSig, body, now.Add(-5*time.Minute - time.Second), 0, ErrStaleTimestamp},
		{"tolerance configurable", vecID, ts, vecSig, body, now.Add(time.Minute), 30 * time.Second, ErrStaleTimestamp},
		{"negative tolerance skips the check", vecID, ts, vecSig, body, time.Now(), -1, nil},
		{"stale and forged is a mismatch", vecID, ts, other, body, now.Add(time.Hour), 0, ErrSignatureMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := VerifyStandard(vecSecret, tt.id, tt.ts, tt.sig, tt.body, tt.now, tt.tolerance)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("VerifyStandard = %v, want %v", err, tt.want)
			}
			n := 0
			for _, e := range []error{ErrNotSigned, ErrSignatureMismatch, ErrStaleTimestamp} {
				if errors.Is(err, e) {
					n++
				}
			}
			if err != nil && n != 1 {
				t.Fatalf("%v wraps %d of the errors", err, n)
			}
		})
	}
}

func BenchmarkSignStandard(b *testing.B) {
	body := []byte(strings.Repeat("<url><loc>http://example.org/r</loc></url>", 50)) // ~2 KiB
	ts := time.Unix(vecTS, 0)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SignStandard(vecSecret, vecID, ts, body); err != nil {
			b.Fatal(err)
		}
	}
}
