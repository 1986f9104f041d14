package wire

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzVerifyStandard checks VerifyStandard against any secret, id,
// timestamp, signature list and body: it never panics, returns nil or an
// error wrapping exactly one of ErrNotSigned, ErrSignatureMismatch and
// ErrStaleTimestamp, accepts a list only when one of its v1 entries is the
// signature SignStandard computes (so no header forges one), and accepts
// whatever SignStandard returns. Seeds are in
// testdata/fuzz/FuzzVerifyStandard.
func FuzzVerifyStandard(f *testing.F) {
	for _, s := range []struct{ secret, id, ts, sig, body string }{
		{vecSecret, vecID, "1614265330", vecSig, vecBody},
		{"raw secret", "msg_1", "0", "v1,AAAA v2,x", "<urlset/>"},
		{"whsec_", "", "", "", ""},
		{"k", "id", "-1", "v1,", "b"},
		{"k", "i.d", "99999999999999999999", "v1,a,b", "."},
	} {
		f.Add(s.secret, s.id, s.ts, s.sig, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, secret, id, ts, sig string, body []byte) {
		now := time.Unix(1614265330, 0)
		_, err := VerifyStandard(secret, id, ts, sig, body, now, -1)
		n := 0
		for _, e := range []error{ErrNotSigned, ErrSignatureMismatch, ErrStaleTimestamp} {
			if errors.Is(err, e) {
				n++
			}
		}
		if err != nil && n != 1 || errors.Is(err, ErrStaleTimestamp) {
			t.Fatalf("VerifyStandard = %v", err)
		}
		if err == nil {
			sec, perr := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
			want, serr := SignStandard(secret, strings.TrimSpace(id), time.Unix(sec, 0), body)
			if perr != nil || serr != nil || !containsSignature(sig, want) {
				t.Fatalf("VerifyStandard accepted %q; SignStandard gives %q (%v, %v)", sig, want, perr, serr)
			}
		}
		// header values reach a receiver without surrounding white space
		if id = strings.TrimSpace(id); id == "" {
			return
		}
		at := time.Unix(int64(len(body))*1000, 0)
		good, err := SignStandard(secret, id, at, body)
		if err != nil {
			if _, kerr := StandardKey(secret); kerr == nil {
				t.Fatalf("SignStandard: %v", err)
			}
			return
		}
		if _, err := VerifyStandard(secret, id, strconv.FormatInt(at.Unix(), 10), good, body, at, 0); err != nil {
			t.Fatalf("VerifyStandard refuses SignStandard's %s: %v", good, err)
		}
	})
}

// containsSignature reports whether the list holds a v1 entry whose
// decoded bytes equal those of want.
func containsSignature(list, want string) bool {
	w, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(want, "v1,"))
	for _, e := range strings.Fields(list) {
		if v, s, ok := strings.Cut(e, ","); ok && v == "v1" {
			if g, err := base64.StdEncoding.DecodeString(s); err == nil && string(g) == string(w) {
				return true
			}
		}
	}
	return false
}
