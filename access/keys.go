package access

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MinSecretLen is the shortest HMAC secret a key may be (RFC 7518 §3.2
// asks for at least the hash's size, 32 bytes for HS256).
const MinSecretLen = 32

// key is one verification key and the algorithms it may verify: a key
// verifies only tokens signed with an algorithm of its own family, so a
// public key can never be used as an HMAC secret (algorithm confusion).
type key struct {
	material any // []byte, *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
	algs     []string
}

// parseKey reads a key setting: PEM text ("-----BEGIN PUBLIC KEY-----",
// or a certificate) holding an RSA, ECDSA (P-256, P-384, P-521) or Ed25519
// public key, otherwise an HMAC secret of at least MinSecretLen bytes.
func parseKey(s string) (key, error) {
	if !strings.HasPrefix(strings.TrimSpace(s), "-----BEGIN") {
		if len(s) < MinSecretLen {
			return key{}, fmt.Errorf("an HMAC secret must be at least %d bytes, got %d (or give a PEM public key)", MinSecretLen, len(s))
		}
		return key{material: []byte(s), algs: []string{"HS256", "HS384", "HS512"}}, nil
	}
	block, _ := pem.Decode([]byte(strings.TrimSpace(s)))
	if block == nil {
		return key{}, errors.New("the key looks like PEM but does not decode")
	}
	var pub any
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return key{}, fmt.Errorf("PEM public key: %w", err)
		}
		pub = k
	case "CERTIFICATE":
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return key{}, fmt.Errorf("PEM certificate: %w", err)
		}
		pub = c.PublicKey
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return key{}, fmt.Errorf("PEM RSA public key: %w", err)
		}
		pub = k
	default:
		return key{}, fmt.Errorf("PEM block %q: give a PUBLIC KEY or a CERTIFICATE (never a private key)", block.Type)
	}
	return publicKey(pub)
}

// publicKey pairs a parsed public key with its algorithms.
func publicKey(pub any) (key, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return key{}, fmt.Errorf("RSA key of %d bits: at least 2048 are needed", k.N.BitLen())
		}
		return key{material: k, algs: []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}}, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return key{material: k, algs: []string{"ES256"}}, nil
		case elliptic.P384():
			return key{material: k, algs: []string{"ES384"}}, nil
		case elliptic.P521():
			return key{material: k, algs: []string{"ES512"}}, nil
		}
		return key{}, errors.New("ECDSA key on an unsupported curve (P-256, P-384 or P-521)")
	case ed25519.PublicKey:
		return key{material: k, algs: []string{"EdDSA"}}, nil
	}
	return key{}, fmt.Errorf("unsupported public key type %T", pub)
}

// verifies returns the key's material if it may verify a token signed with alg.
func (k key) verifies(alg string) (any, error) {
	if !slices.Contains(k.algs, alg) {
		return nil, fmt.Errorf("the token is signed with %s, which this key does not verify (it verifies %s)", clip(alg), strings.Join(k.algs, ", "))
	}
	return k.material, nil
}

// clip bounds a string taken from a token before it goes into a message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
