package subscriber

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

// SignatureHeader is the header a hub signs deliveries with.
const SignatureHeader = "X-Hub-Signature"

// Errors of VerifySignature.
var (
	ErrNoSignature  = errors.New("subscriber: delivery is not signed")
	ErrBadSignature = errors.New("subscriber: signature does not match")
)

// newHash returns the HMAC hash of a WebSub signature method.
func newHash(method string) func() hash.Hash {
	switch method {
	case "sha1":
		return sha1.New
	case "sha256":
		return sha256.New
	case "sha384":
		return sha512.New384
	case "sha512":
		return sha512.New
	}
	return nil
}

// Sign returns the X-Hub-Signature value "method=hex" of body under secret.
func Sign(method, secret string, body []byte) (string, error) {
	h := newHash(method)
	if h == nil {
		return "", fmt.Errorf("subscriber: unknown signature method %q", method)
	}
	m := hmac.New(h, []byte(secret))
	m.Write(body)
	return method + "=" + hex.EncodeToString(m.Sum(nil)), nil
}

// VerifySignature checks an X-Hub-Signature header value against body and
// secret, recomputing the HMAC with the method the header names (WebSub
// §8). It returns ErrNoSignature for an empty header and ErrBadSignature
// (wrapped) for any other failure.
func VerifySignature(header, secret string, body []byte) error {
	if header == "" {
		return ErrNoSignature
	}
	method, sig, ok := strings.Cut(strings.TrimSpace(header), "=")
	if !ok {
		return fmt.Errorf("%w: header %q is not method=hex", ErrBadSignature, header)
	}
	h := newHash(strings.ToLower(method))
	if h == nil {
		return fmt.Errorf("%w: unknown method %q", ErrBadSignature, method)
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: not hex", ErrBadSignature)
	}
	m := hmac.New(h, []byte(secret))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}
