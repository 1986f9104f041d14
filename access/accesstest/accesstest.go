// Package accesstest mints JSON Web Tokens for tests outside Go: keys made
// by the openssl command, tokens signed by a Python script of the standard
// library (HMAC) and openssl (RSA, ECDSA, Ed25519), so the hub's verifier
// is tested against tokens no Go code produced.
package accesstest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

//go:embed mint.py
var mintScript string

// Keys are one test's signing keys, as files, and their public halves as
// PEM text (the values of --subscriber-jwt-key and --publisher-jwt-key).
type Keys struct {
	dir string
	// Secret is the HMAC secret (also in the file dir/secret).
	Secret string
	// RSA, EC and Ed25519 are the PEM public keys.
	RSA, EC, Ed25519 string
}

// NewKeys makes a secret and an RSA, a P-256 and an Ed25519 key pair in a
// temporary directory; it fails the test when python3 or openssl is
// missing.
func NewKeys(t testing.TB) *Keys {
	t.Helper()
	k := NewSecret(t)
	gen := map[string][]string{
		"rsa":     {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"},
		"ec":      {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"},
		"ed25519": {"-algorithm", "ED25519"},
	}
	pubs := map[string]*string{"rsa": &k.RSA, "ec": &k.EC, "ed25519": &k.Ed25519}
	for name, args := range gen {
		priv := filepath.Join(k.dir, name+".pem")
		run(t, "openssl", append([]string{"genpkey", "-out", priv}, args...)...)
		*pubs[name] = run(t, "openssl", "pkey", "-in", priv, "-pubout")
	}
	return k
}

// NewSecret makes only the HMAC secret (quicker: tests of the doors sign
// with HS256); it fails the test when python3 or openssl is missing
// (scripts/deps.sh installs both).
func NewSecret(t testing.TB) *Keys {
	t.Helper()
	for _, tool := range []string{"python3", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to mint tokens outside Go (scripts/deps.sh installs it): %v", tool, err)
		}
	}
	k := &Keys{dir: t.TempDir(), Secret: "an HMAC secret of at least 32 bytes, for tests"}
	if err := os.WriteFile(filepath.Join(k.dir, "secret"), []byte(k.Secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// Verifier returns a verifier of the HMAC secret.
func (k *Keys) Verifier(t testing.TB) *access.Verifier {
	t.Helper()
	v, err := access.New(access.Config{Key: k.Secret})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Mint signs claims with alg: HS256/384/512 with the secret, RS256 or PS256
// with the RSA key, ES256 with the EC key, EdDSA with the Ed25519 key,
// "none" unsigned. header is merged over {"alg","typ"} (nil for none).
func (k *Keys) Mint(t testing.TB, alg string, header map[string]any, claims any) string {
	t.Helper()
	file := map[string]string{"RS": "rsa.pem", "PS": "rsa.pem", "ES": "ec.pem", "Ed": "ed25519.pem", "HS": "secret", "no": "secret"}[alg[:2]]
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	if header == nil {
		h = []byte("{}")
	}
	p, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, "python3", "-c", mintScript, alg, filepath.Join(k.dir, file), string(h), string(p))
}

// Mercure returns claims in Mercure's shape: subscribe and publish
// selectors, and exp/nbf as Unix seconds when not zero.
func Mercure(subscribe, publish []string, exp, nbf int64) map[string]any {
	c := map[string]any{"mercure": map[string]any{"subscribe": subscribe, "publish": publish}}
	if exp != 0 {
		c["exp"] = exp
	}
	if nbf != 0 {
		c["nbf"] = nbf
	}
	return c
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + string(ee.Stderr)
		}
		if args[0] == "-c" {
			args = append([]string{"mint.py"}, args[2:]...)
		}
		t.Fatalf("%s %s: %s", name, wire.Clip(strings.Join(args, " ")), msg)
	}
	return string(out)
}

// MintWithSecret signs claims with HS256 and secret as the HMAC key (for
// the algorithm confusion attack: a public key's PEM used as a secret).
func (k *Keys) MintWithSecret(t testing.TB, secret string, claims any) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(f, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, "python3", "-c", mintScript, "HS256", f, "{}", string(p))
}

// JWK encodes a PEM public key (Keys.RSA, EC or Ed25519) as a JSON Web
// Key named kid, for a key set a test serves.
func JWK(t testing.TB, pemText, kid string) map[string]string {
	t.Helper()
	block, _ := pem.Decode([]byte(pemText))
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "n": enc(k.N.Bytes()), "e": enc(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		raw, _ := k.Bytes()
		return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": enc(raw[1:33]), "y": enc(raw[33:])}
	case ed25519.PublicKey:
		return map[string]string{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": enc(k)}
	}
	t.Fatalf("key %T", pub)
	return nil
}
