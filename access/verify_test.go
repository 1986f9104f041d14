package access_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/access/accesstest"
)

const topic = "https://example.org/private/1"

func verifier(t *testing.T, key string) *access.Verifier {
	t.Helper()
	v, err := access.New(access.Config{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerify_TokensMintedOutsideGo(t *testing.T) {
	k := accesstest.NewKeys(t)
	exp := time.Now().Add(time.Hour).Unix()
	claims := accesstest.Mercure([]string{"https://example.org/private/{id}"}, []string{topic}, exp, 0)
	for _, c := range []struct{ alg, key string }{
		{"HS256", k.Secret}, {"HS512", k.Secret}, {"RS256", k.RSA}, {"PS256", k.RSA}, {"ES256", k.EC}, {"EdDSA", k.Ed25519},
	} {
		t.Run(c.alg, func(t *testing.T) {
			g, err := verifier(t, c.key).Verify(context.Background(), k.Mint(t, c.alg, nil, claims))
			if err != nil {
				t.Fatal(err)
			}
			if !g.Allows(access.Subscribe, topic) || !g.Allows(access.Publish, topic) || g.Allows(access.Publish, topic+"/x") {
				t.Errorf("grant does not follow the claims")
			}
			if g.Expires.Unix() != exp {
				t.Errorf("Expires = %v, want %d", g.Expires, exp)
			}
		})
	}
}

func TestVerify_RefusesHostileTokens(t *testing.T) {
	k := accesstest.NewKeys(t)
	now := time.Now()
	ok := accesstest.Mercure([]string{"*"}, nil, now.Add(time.Hour).Unix(), 0)
	good := k.Mint(t, "RS256", nil, ok)
	head, _, _ := strings.Cut(good, ".")
	rsaPEMAsSecret := verifier(t, k.RSA)
	// algorithm confusion: an HS256 token whose secret is the RSA public key's PEM
	confused := mintHS256(t, k, k.RSA, ok)
	cases := []struct {
		name, token string
		v           *access.Verifier
		want        string
	}{
		{"bad signature", good[:len(good)-4] + "AAAA", rsaPEMAsSecret, "signature is invalid"},
		{"claims swapped under a valid signature", head + "." + b64(`{"mercure":{"subscribe":["*"]}}`) + "." + strings.Split(good, ".")[2], rsaPEMAsSecret, "signature is invalid"},
		{"alg none", k.Mint(t, "none", nil, ok), rsaPEMAsSecret, "signing method none is invalid"},
		{"alg none with an HMAC key", k.Mint(t, "none", nil, ok), verifier(t, k.Secret), "signing method none is invalid"},
		{"HS256 where an RSA key is set", k.Mint(t, "HS256", nil, ok), rsaPEMAsSecret, "signing method HS256 is invalid"},
		{"HS256 signed with the public key's PEM (confusion)", confused, rsaPEMAsSecret, "signing method HS256 is invalid"},
		{"RS256 where an HMAC secret is set", good, verifier(t, k.Secret), "signing method RS256 is invalid"},
		{"ES256 where an RSA key is set (wrong key type)", k.Mint(t, "ES256", nil, ok), rsaPEMAsSecret, "signing method ES256 is invalid"},
		{"EdDSA where an EC key is set", k.Mint(t, "EdDSA", nil, ok), verifier(t, k.EC), "signing method EdDSA is invalid"},
		{"expired beyond the leeway", k.Mint(t, "RS256", nil, accesstest.Mercure([]string{"*"}, nil, now.Add(-time.Minute).Unix(), 0)), rsaPEMAsSecret, "expired"},
		{"nbf in the future", k.Mint(t, "RS256", nil, accesstest.Mercure([]string{"*"}, nil, 0, now.Add(time.Minute).Unix())), rsaPEMAsSecret, "not valid yet"},
		{"100 KB token", good + strings.Repeat("A", 100<<10), rsaPEMAsSecret, "longer than"},
		{"not a token", "hello", rsaPEMAsSecret, "malformed"},
		{"selectors beyond the bound", k.Mint(t, "RS256", nil, accesstest.Mercure(make([]string, access.MaxSelectors+1), nil, 0, 0)), rsaPEMAsSecret, "bad claims"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.v.Verify(context.Background(), c.token)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to say %q", err, c.want)
			}
			if len(err.Error()) > 300 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		})
	}
}

// One exp rule at the handshake and at a session's end: a token is
// refused from its exp on, without leeway (a session it admitted ends at
// exp); nbf keeps the leeway for clock skew.
func TestVerify_NoLeewayPastExpLeewayOnNbf(t *testing.T) {
	k := accesstest.NewSecret(t)
	now := time.Now()
	v := verifier(t, k.Secret)
	if _, err := v.Verify(context.Background(), k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"*"}, nil, now.Add(-2*time.Second).Unix(), 0))); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("a token 2 s past exp: %v, want refused as expired", err)
	}
	if _, err := v.Verify(context.Background(), k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"*"}, nil, 0, now.Add(2*time.Second).Unix()))); err != nil {
		t.Errorf("nbf within the leeway: %v", err)
	}
}

// RFC 7515 §4.1.11: a token with a crit header this hub does not
// understand (it understands none) is refused, whatever it names.
func TestVerify_RefusesUnknownCrit(t *testing.T) {
	k := accesstest.NewSecret(t)
	v := verifier(t, k.Secret)
	claims := accesstest.Mercure([]string{"*"}, nil, time.Now().Add(time.Hour).Unix(), 0)
	for _, crit := range []any{[]string{"exp"}, []string{"http://example.com/ext"}, []string{}} {
		raw := k.Mint(t, "HS256", map[string]any{"crit": crit, "http://example.com/ext": true}, claims)
		if _, err := v.Verify(context.Background(), raw); err == nil || !strings.Contains(err.Error(), "crit") {
			t.Errorf("crit %v: %v, want refused naming crit", crit, err)
		}
	}
	if _, err := v.Verify(context.Background(), k.Mint(t, "HS256", nil, claims)); err != nil {
		t.Fatalf("the same token without crit: %v", err)
	}
}

// With Audience and Issuer set, a token must name the audience and have
// the issuer; without them, neither is looked at.
func TestVerify_AudienceAndIssuerWhenSet(t *testing.T) {
	k := accesstest.NewSecret(t)
	v, err := access.New(access.Config{Key: k.Secret, Audience: "https://hub.example/", Issuer: "https://idp.example/"})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour).Unix()
	mint := func(aud, iss any) string {
		c := accesstest.Mercure([]string{"*"}, nil, exp, 0)
		if aud != nil {
			c["aud"] = aud
		}
		if iss != nil {
			c["iss"] = iss
		}
		return k.Mint(t, "HS256", nil, c)
	}
	for name, c := range map[string]struct {
		raw string
		ok  bool
	}{
		"both":              {mint("https://hub.example/", "https://idp.example/"), true},
		"aud among several": {mint([]string{"other", "https://hub.example/"}, "https://idp.example/"), true},
		"no aud":            {mint(nil, "https://idp.example/"), false},
		"other aud":         {mint("https://other.example/", "https://idp.example/"), false},
		"no iss":            {mint("https://hub.example/", nil), false},
		"other iss":         {mint("https://hub.example/", "https://evil.example/"), false},
	} {
		if _, err := v.Verify(context.Background(), c.raw); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", name, err, c.ok)
		}
	}
	open := verifier(t, k.Secret)
	if _, err := open.Verify(context.Background(), mint("https://other.example/", "https://evil.example/")); err != nil {
		t.Errorf("without Audience and Issuer, aud and iss are not looked at: %v", err)
	}
}

func TestNew_RefusesWeakOrPrivateKeys(t *testing.T) {
	for name, key := range map[string]string{
		"short secret": "too short",
		"private key":  "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n",
		"broken PEM":   "-----BEGIN PUBLIC KEY-----\nnot base64\n",
	} {
		if _, err := access.New(access.Config{Key: key}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if v, err := access.New(access.Config{}); v != nil || err != nil {
		t.Errorf("no key: %v, %v", v, err)
	}
}

func TestCheck_AnswersOfADoor(t *testing.T) {
	k := accesstest.NewSecret(t)
	v := verifier(t, k.Secret)
	exp := time.Now().Add(time.Hour).Unix()
	reader := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{topic}, nil, exp, 0))
	other := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"https://example.org/other"}, nil, exp, 0))
	cases := []struct {
		name   string
		set    func(*http.Request)
		topic  string
		status int
		header string
	}{
		{"no token", func(*http.Request) {}, topic, 404, ""},
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+reader) }, topic, 0, ""},
		{"cookie", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: access.CookieName, Value: reader}) }, topic, 0, ""},
		{"query", func(r *http.Request) { r.URL.RawQuery = access.QueryParam + "=" + reader }, topic, 0, ""},
		{"bad token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer x.y.z") }, topic, 401, `error="invalid_token"`},
		{"bad token, no channel", func(r *http.Request) { r.Header.Set("Authorization", "Bearer x.y.z") }, "", 401, `error="invalid_token"`},
		{"good token, no channel", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+reader) }, "", 404, ""},
		{"token for another topic", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+other) }, topic, 403, `mercure.subscribe`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/x", nil)
			c.set(r)
			_, ref := v.Check(context.Background(), r, access.Subscribe, c.topic, "")
			if c.status == 0 {
				if ref != nil {
					t.Fatalf("refused: %d %s", ref.Status, ref.Reason)
				}
				return
			}
			if ref == nil || ref.Status != c.status {
				t.Fatalf("got %+v, want status %d", ref, c.status)
			}
			w := httptest.NewRecorder()
			ref.Write(w)
			if got := w.Header().Get("WWW-Authenticate"); !strings.Contains(got, c.header) {
				t.Errorf("WWW-Authenticate %q, want %q", got, c.header)
			}
		})
	}
	// the Bearer credentials of another scheme (the --ws-token) are not a JWT
	r := httptest.NewRequest("GET", "/ws", nil)
	r.Header.Set("Authorization", "Bearer ws-secret")
	if got := access.TokenFrom(r, "ws-secret"); got != "" {
		t.Errorf("TokenFrom took the skipped Bearer credentials: %q", got)
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// mintHS256 signs with secret as the HMAC key, outside Go.
func mintHS256(t *testing.T, k *accesstest.Keys, secret string, claims any) string {
	t.Helper()
	return k.MintWithSecret(t, secret, claims)
}
