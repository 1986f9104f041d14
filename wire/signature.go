package wire

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// HeaderSignature is the header that carries the signature of a webhook
// delivery to a subscription made with a hub.secret (WebSub §8).
const HeaderSignature = "X-Hub-Signature"

// DefaultSigMethod is the signature method Sign uses when given none.
const DefaultSigMethod = "sha256"

// Errors of Verify. A failure other than a missing signature wraps
// ErrSignatureMismatch with the reason.
var (
	ErrNotSigned         = errors.New("delivery is not signed")
	ErrSignatureMismatch = errors.New("signature does not match")
)

// sigMethods are the signature methods, by name in lower case, with the
// hash of their HMAC.
var sigMethods = [...]struct {
	name string
	h    func() hash.Hash
}{{"sha1", sha1.New}, {"sha256", sha256.New}, {"sha384", sha512.New384}, {"sha512", sha512.New}}

// sigMethod returns the index in sigMethods of a method already in lower
// case, -1 when it is none.
func sigMethod(method string) int {
	for i := range sigMethods {
		if sigMethods[i].name == method {
			return i
		}
	}
	return -1
}

// sigHash returns the HMAC hash of a signature method, already in lower
// case.
func sigHash(method string) (func() hash.Hash, bool) {
	if i := sigMethod(method); i >= 0 {
		return sigMethods[i].h, true
	}
	return nil, false
}

// ValidSigMethod reports whether method is one of the WebSub signature
// methods a hub may be configured with: sha1, sha256, sha384 or sha512,
// spelled in lower case as they appear in a signature.
func ValidSigMethod(method string) bool {
	_, ok := sigHash(method)
	return ok
}

// Sign returns the X-Hub-Signature value of body under secret:
// "<method>=<lower-case hex HMAC of body>". The method name is
// case-insensitive and written in lower case; "" means DefaultSigMethod.
// Any other name than sha1, sha256, sha384 and sha512 is an error.
// A Signer makes it without the allocations of a new HMAC.
func Sign(method, secret string, body []byte) (string, error) {
	var s Signer
	return s.Sign(method, secret, body)
}

// Verify checks header, an X-Hub-Signature value, against body and secret,
// recomputing the HMAC with the method the header names, and comparing in
// constant time. The contract, what a WebSub subscriber expects of a hub:
//
//   - white space around the value is ignored;
//   - the value is "<method>=<hex>"; the method is sha1, sha256, sha384 or
//     sha512 in any case (there is no default: "=<hex>" names none), the
//     hex digits are in any case;
//   - an empty value (or only spaces) returns ErrNotSigned;
//   - anything else that is not a valid signature of body under secret
//     returns an error wrapping ErrSignatureMismatch with the reason.
//
// Everything Sign returns verifies.
func Verify(header, secret string, body []byte) error {
	v := strings.TrimSpace(header)
	if v == "" {
		return ErrNotSigned
	}
	method, sig, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%w: the value is not method=hex", ErrSignatureMismatch)
	}
	h, ok := sigHash(strings.ToLower(method))
	if !ok {
		return fmt.Errorf("%w: unknown method %q", ErrSignatureMismatch, Clip(method))
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: the signature is not hex", ErrSignatureMismatch)
	}
	mac := hmac.New(h, []byte(secret))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return ErrSignatureMismatch
	}
	return nil
}
