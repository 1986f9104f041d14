package access

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Defaults of a Verifier.
const (
	// DefaultLeeway is the clock skew allowed on nbf and iat (exp has
	// none: a token is refused from its exp on, when the sessions it
	// admitted end).
	DefaultLeeway = 10 * time.Second
	// MaxTokenLen bounds a token: a longer one is refused unread.
	MaxTokenLen = 8 << 10
	// JWKSTTL is how long a fetched key set is used before it is read again.
	JWKSTTL = 10 * time.Minute
	// JWKSRefetch is the shortest time between two reads of a key set.
	JWKSRefetch = 30 * time.Second
	// JWKSTimeout bounds one read of a key set.
	JWKSTimeout = 5 * time.Second
)

// Config says how tokens of one role (subscribers or publishers) are
// verified: with Key, with the key set at JWKSURL, or with both.
type Config struct {
	// Key is an HMAC secret or a PEM public key (RS*, PS*, ES*, EdDSA).
	Key string
	// JWKSURL is the URL of a JSON Web Key Set, read through Client; a
	// token's kid header names the key.
	JWKSURL string
	Client  *http.Client
	// Leeway is the clock skew allowed on nbf and iat; 0 means
	// DefaultLeeway.
	Leeway time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Audience and Issuer, when set, are the aud a token must name and the
	// iss it must have.
	Audience, Issuer string
	// Access are the rules an access token of the current Mercure draft
	// (one with authorization_details, or typ at+jwt) must meet for
	// Verify, which reads its grant as VerifyAccess does: one grant
	// decides every face.
	Access AccessRules
	// OnKeySetError, when set, is told every failed read of the key set
	// at JWKSURL (naming the URL and the cause); callers are told only
	// ErrKeySetUnavailable.
	OnKeySetError func(error)
}

// Verifier verifies tokens and reads their grants. A nil *Verifier
// verifies nothing: every token is refused.
type Verifier struct {
	static *key
	set    *jwks
	parser *jwt.Parser
	now    func() time.Time
	rules  AccessRules // Config.Access
}

// New returns the Verifier of cfg, or nil when cfg names no key.
func New(cfg Config) (*Verifier, error) {
	if cfg.Key == "" && cfg.JWKSURL == "" {
		return nil, nil
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Leeway = cmp.Or(cfg.Leeway, DefaultLeeway)
	v := &Verifier{now: cfg.Now, rules: cfg.Access}
	algs := []string{}
	if cfg.Key != "" {
		k, err := parseKey(cfg.Key)
		if err != nil {
			return nil, err
		}
		v.static = &k
		algs = append(algs, k.algs...)
	}
	if cfg.JWKSURL != "" {
		if cfg.Client == nil {
			return nil, errors.New("a JWKS URL needs an HTTP client")
		}
		v.set = &jwks{url: cfg.JWKSURL, client: cfg.Client, ttl: JWKSTTL, refetch: JWKSRefetch, timeout: JWKSTimeout, now: cfg.Now, failed: cfg.OnKeySetError}
		algs = append(algs, "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(algs), // never "none", never an algorithm no key verifies
		jwt.WithLeeway(cfg.Leeway), // on nbf and iat; exp has none (Verify)
		jwt.WithTimeFunc(cfg.Now),
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// KeySetState reports whether the last read of the verifier's key set
// failed, since when and why (for readiness); false without a key set.
func (v *Verifier) KeySetState() (failing bool, since time.Time, err error) {
	if v == nil || v.set == nil {
		return false, time.Time{}, nil
	}
	return v.set.state()
}

// RecheckKeySet reads the key set again when its last read failed (at most
// once per JWKSRefetch), and reports whether reads still fail and since
// when: readiness probes call it, so a set that mends shows without a
// token arriving.
func (v *Verifier) RecheckKeySet(ctx context.Context) (failing bool, since time.Time) {
	if v == nil || v.set == nil {
		return false, time.Time{}
	}
	return v.set.recheck(ctx)
}

// Verify checks raw's signature, alg, crit, exp, nbf (and aud and iss when
// Config names them) and returns its grant: the older mercure claim's and,
// for an access token of the current draft, its authorization_details'
// under Config.Access (VerifyAccess).
// The error says why a token is refused, in words fit for an RFC 6750
// error_description.
func (v *Verifier) Verify(ctx context.Context, raw string) (Grant, error) {
	if v == nil {
		return Grant{}, errors.New("this hub verifies no tokens")
	}
	return v.verify(ctx, raw, v.rules)
}

// verify is Verify with the rules of access tokens given.
func (v *Verifier) verify(ctx context.Context, raw string, rules AccessRules) (Grant, error) {
	if len(raw) > MaxTokenLen {
		return Grant{}, fmt.Errorf("the token is longer than %d bytes", MaxTokenLen)
	}
	var c accessClaims
	tok, err := v.parser.ParseWithClaims(raw, &c, func(t *jwt.Token) (any, error) {
		if _, ok := t.Header["crit"]; ok {
			// RFC 7515 §4.1.11: a token whose critical extensions the
			// recipient does not understand is refused; this hub
			// understands none
			return nil, errCrit
		}
		return v.keyFor(ctx, t)
	})
	if err != nil {
		return Grant{}, describe(err)
	}
	// one rule at both ends: a token is refused from its exp on, the
	// moment a session it admitted ends (no leeway past exp)
	if c.ExpiresAt != nil && !v.now().Before(c.ExpiresAt.Time) {
		return Grant{}, errors.New("the token has expired")
	}
	g, err := GrantOf(&c.Claims)
	if err != nil {
		return Grant{}, fmt.Errorf("bad claims: %w", err)
	}
	typ, _ := tok.Header["typ"].(string)
	if err := rules.addAccess(&g, typ, &c); err != nil {
		return Grant{}, err
	}
	return g, nil
}

// keyFor picks the key that verifies t: the key set's key named by kid
// when the token names one and a set is configured, else the static key;
// the key must verify t's algorithm.
func (v *Verifier) keyFor(ctx context.Context, t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	kid, _ := t.Header["kid"].(string)
	if v.set != nil && (kid != "" || v.static == nil) {
		k, err := v.set.lookup(ctx, kid)
		if err != nil {
			return nil, err
		}
		return k.verifies(alg)
	}
	if v.static == nil {
		return nil, errors.New("no key")
	}
	return v.static.verifies(alg)
}

// errCrit refuses a token with a crit header.
var errCrit = errors.New("the token names critical header parameters (crit), which this hub does not understand")

// describe turns a parse error into a short reason that repeats nothing
// of the token but its algorithm and kid (clipped).
func describe(err error) error {
	switch {
	case errors.Is(err, ErrKeySetUnavailable):
		return ErrKeySetUnavailable
	case errors.Is(err, errCrit):
		return errCrit
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return errors.New("the token's aud does not name this hub's audience")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return errors.New("the token's iss is not this hub's issuer")
	case errors.Is(err, jwt.ErrTokenExpired):
		return errors.New("the token has expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return errors.New("the token is not valid yet")
	case errors.Is(err, jwt.ErrTokenMalformed):
		return errors.New("the token is malformed")
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return errors.New(msg)
}
