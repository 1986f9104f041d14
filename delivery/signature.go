package delivery

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// DefaultSigMethod is the signature method used when none is configured.
const DefaultSigMethod = "sha256"

// SignatureHeader is the header that carries the signature of a delivery.
const SignatureHeader = "X-Hub-Signature"

func sigHash(method string) (func() hash.Hash, bool) {
	switch method {
	case "sha1":
		return sha1.New, true
	case "sha256":
		return sha256.New, true
	case "sha384":
		return sha512.New384, true
	case "sha512":
		return sha512.New, true
	}
	return nil, false
}

// ValidSigMethod reports whether method is one of the WebSub signature
// methods: sha1, sha256, sha384 or sha512.
func ValidSigMethod(method string) bool {
	_, ok := sigHash(method)
	return ok
}

// Sign returns the X-Hub-Signature value for body under secret:
// "<method>=<lowercase hex HMAC of body>". An empty method means
// DefaultSigMethod.
func Sign(method, secret string, body []byte) (string, error) {
	if method == "" {
		method = DefaultSigMethod
	}
	h, ok := sigHash(method)
	if !ok {
		return "", fmt.Errorf("delivery: unknown signature method %q", method)
	}
	mac := hmac.New(h, []byte(secret))
	mac.Write(body)
	sum := mac.Sum(nil)
	buf := make([]byte, len(method)+1+hex.EncodedLen(len(sum)))
	n := copy(buf, method)
	buf[n] = '='
	hex.Encode(buf[n+1:], sum)
	return string(buf), nil
}

// VerifySignature reports whether header, an X-Hub-Signature value, is a
// valid signature of body under secret, with the method the header names.
// It compares in constant time. Subscribers and tests use it.
func VerifySignature(header, secret string, body []byte) bool {
	method, sig, ok := strings.Cut(header, "=")
	if !ok {
		return false
	}
	h, ok := sigHash(method)
	if !ok {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	mac := hmac.New(h, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}
