package access

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// JWKS bounds: the largest key set read, and the most keys kept of it.
const (
	maxJWKSBytes = 256 << 10
	maxJWKSKeys  = 32
)

// Doer sends an HTTP request: the SSRF-guarded client.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// jwks is a key set fetched from a URL and kept for ttl; a token naming a
// kid the set lacks fetches it again (key rotation), at most once per
// refetch interval, so unknown kids cannot make the hub hammer the URL.
type jwks struct {
	url     string
	client  Doer
	ttl     time.Duration
	refetch time.Duration
	timeout time.Duration
	now     func() time.Time

	// failed, when set, is told every failed read of the set, with the
	// URL and the cause (for the operator's logs and metrics, never for
	// callers).
	failed func(error)

	mu      sync.Mutex
	keys    map[string]key
	fetched time.Time // when keys were read; zero before the first success
	tried   time.Time // the last attempt, successful or not
	// failingSince is when the reads began to fail, zero while the last
	// succeeded; lastErr is the last failure's cause.
	failingSince time.Time
	lastErr      error
}

// ErrKeySetUnavailable is what a caller is told when the key set cannot be
// read: never its URL or the cause, which go to the operator (Config.
// OnKeySetError).
var ErrKeySetUnavailable = errors.New("the key set is unavailable")

// lookup returns the key named kid, fetching the set when it is stale or
// lacks kid.
func (j *jwks) lookup(ctx context.Context, kid string) (key, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	k, ok := j.keys[kid]
	stale := j.fetched.IsZero() || now.Sub(j.fetched) > j.ttl
	if ok && !stale {
		return k, nil
	}
	if now.Sub(j.tried) >= j.refetch || j.tried.IsZero() {
		j.tried = now
		keys, err := j.fetch(ctx)
		if err != nil {
			j.fail(now, err)
			if ok { // keep verifying with the keys known, the set's server is down
				return k, nil
			}
			return key{}, ErrKeySetUnavailable
		}
		j.keys, j.fetched = keys, now
		j.failingSince, j.lastErr = time.Time{}, nil
		if k, ok = keys[kid]; ok {
			return k, nil
		}
	}
	if ok {
		return k, nil
	}
	return key{}, fmt.Errorf("no key %q in the key set", clip(kid))
}

// fail records a failed read at now.
func (j *jwks) fail(now time.Time, err error) {
	err = fmt.Errorf("key set %s: %w", j.url, err)
	if j.failingSince.IsZero() {
		j.failingSince = now
	}
	j.lastErr = err
	if j.failed != nil {
		j.failed(err)
	}
}

// state reports whether the last read of the set failed, since when, and
// why.
func (j *jwks) state() (failing bool, since time.Time, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.failingSince.IsZero(), j.failingSince, j.lastErr
}

// recheck reads the set again when its last read failed and the refetch
// interval has passed, and reports whether reads still fail.
func (j *jwks) recheck(ctx context.Context) (failing bool, since time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	if !j.failingSince.IsZero() && now.Sub(j.tried) >= j.refetch {
		j.tried = now
		if keys, err := j.fetch(ctx); err != nil {
			j.fail(now, err)
		} else {
			j.keys, j.fetched = keys, now
			j.failingSince, j.lastErr = time.Time{}, nil
		}
	}
	return !j.failingSince.IsZero(), j.failingSince
}

// fetch reads and parses the key set.
func (j *jwks) fetch(ctx context.Context) (map[string]key, error) {
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the key set URL answered %d", resp.StatusCode)
	}
	if resp.Request != nil && resp.Request.URL.String() != req.URL.String() {
		// a key set is read where the operator said, never where its
		// server sends the hub (a client that follows redirects)
		return nil, fmt.Errorf("the key set URL redirected to %s", resp.Request.URL.Redacted())
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("the key set is larger than %d bytes", maxJWKSBytes)
	}
	return parseJWKS(body)
}

// jwk is one JSON Web Key (RFC 7517) of the kinds a key set may hold.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS reads a key set: its RSA, EC and OKP (Ed25519) signing keys by
// kid. Keys of other kinds or uses are skipped; a set with no usable key
// is an error.
func parseJWKS(body []byte) (map[string]key, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("the key set is not JSON: %w", err)
	}
	keys := make(map[string]key)
	for _, jk := range set.Keys {
		if len(keys) == maxJWKSKeys {
			break
		}
		if jk.Use != "" && jk.Use != "sig" {
			continue
		}
		k, err := jk.key()
		if err != nil {
			continue
		}
		if jk.Alg != "" { // a key bound to one algorithm verifies only that one
			if _, err := k.verifies(jk.Alg); err != nil {
				continue
			}
			k.algs = []string{jk.Alg}
		}
		keys[jk.Kid] = k
	}
	if len(keys) == 0 {
		return nil, errors.New("the key set holds no usable signing key")
	}
	return keys, nil
}

// key decodes one JSON Web Key.
func (jk jwk) key() (key, error) {
	b := func(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
	switch jk.Kty {
	case "RSA":
		n, err1 := b(jk.N)
		e, err2 := b(jk.E)
		if err := errors.Join(err1, err2); err != nil || len(e) == 0 || len(e) > 4 {
			return key{}, errors.New("bad RSA key")
		}
		return publicKey(&rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())})
	case "EC":
		var curve elliptic.Curve
		switch jk.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return key{}, errors.New("unsupported curve")
		}
		x, err1 := b(jk.X)
		y, err2 := b(jk.Y)
		size := (curve.Params().BitSize + 7) / 8
		if err := errors.Join(err1, err2); err != nil || len(x) != size || len(y) != size {
			return key{}, errors.New("bad EC key")
		}
		uncompressed := append(append([]byte{4}, x...), y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, uncompressed)
		if err != nil {
			return key{}, err
		}
		return publicKey(pub)
	case "OKP":
		x, err := b(jk.X)
		if err != nil || jk.Crv != "Ed25519" || len(x) != ed25519.PublicKeySize {
			return key{}, errors.New("bad OKP key")
		}
		return publicKey(ed25519.PublicKey(x))
	}
	return key{}, errors.New("unsupported key type")
}
