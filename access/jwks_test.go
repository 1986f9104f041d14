package access_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/access/accesstest"
)

// keySet is a JWKS URL whose answer a test changes.
type keySet struct {
	mu   sync.Mutex
	body string
	hang bool
	hits int
}

func (s *keySet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body, hang := s.body, s.hang
	s.hits++
	s.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return
	}
	_, _ = w.Write([]byte(body))
}

func (s *keySet) set(t *testing.T, keys ...map[string]string) {
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.body = string(b)
	s.mu.Unlock()
}

func TestJWKS_VerifiesByKidAndFollowsRotation(t *testing.T) {
	k := accesstest.NewKeys(t)
	ks := &keySet{}
	ks.set(t, accesstest.JWK(t, k.RSA, "old"), map[string]string{"kty": "oct", "kid": "skipped", "k": "c2VjcmV0"})
	srv := httptest.NewServer(ks)
	defer srv.Close()
	now := time.Now()
	clock := func() time.Time { return now }
	v, err := access.New(access.Config{JWKSURL: srv.URL, Client: srv.Client(), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	claims := accesstest.Mercure([]string{"*"}, nil, now.Add(time.Hour).Unix(), 0)
	ctx := context.Background()
	if _, err := v.Verify(ctx, k.Mint(t, "RS256", map[string]any{"kid": "old"}, claims)); err != nil {
		t.Fatalf("kid old: %v", err)
	}
	ec := k.Mint(t, "ES256", map[string]any{"kid": "new"}, claims)
	if _, err := v.Verify(ctx, ec); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Fatalf("unknown kid: %v", err)
	}
	ks.set(t, accesstest.JWK(t, k.EC, "new"), accesstest.JWK(t, k.Ed25519, "ed"))
	if _, err := v.Verify(ctx, ec); err == nil {
		t.Fatal("an unknown kid read the set again within the refetch interval")
	}
	now = now.Add(access.JWKSRefetch)
	if _, err := v.Verify(ctx, ec); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if _, err := v.Verify(ctx, k.Mint(t, "EdDSA", map[string]any{"kid": "ed"}, claims)); err != nil {
		t.Fatalf("Ed25519 key: %v", err)
	}
	// a key set's RSA key verifies no HS256 token, whatever secret it was signed with
	if _, err := v.Verify(ctx, k.Mint(t, "HS256", map[string]any{"kid": "new"}, claims)); err == nil {
		t.Fatal("HS256 accepted with a key set")
	}
	if ks.hits != 2 {
		t.Errorf("key set read %d times, want 2", ks.hits)
	}
}

func TestJWKS_HostileKeySets(t *testing.T) {
	k := accesstest.NewKeys(t)
	token := k.Mint(t, "RS256", map[string]any{"kid": "a"}, accesstest.Mercure([]string{"*"}, nil, time.Now().Add(time.Hour).Unix(), 0))
	for name, c := range map[string]struct {
		body string
		hang bool
	}{
		"times out":          {hang: true},
		"garbage":            {body: "<html>not a key set</html>"},
		"no usable key":      {body: `{"keys":[{"kty":"RSA","kid":"a","n":"!!","e":"AQAB"}]}`},
		"small RSA key":      {body: `{"keys":[{"kty":"RSA","kid":"a","n":"AQAB","e":"AQAB"}]}`},
		"EC point off curve": {body: `{"keys":[{"kty":"EC","kid":"a","crv":"P-256","x":"` + strings.Repeat("A", 43) + `","y":"` + strings.Repeat("A", 43) + `"}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(&keySet{body: c.body, hang: c.hang})
			defer srv.Close()
			v, err := access.New(access.Config{JWKSURL: srv.URL, Client: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if _, err := v.Verify(ctx, token); err == nil || !strings.Contains(err.Error(), "key set") {
				t.Fatalf("got %v, want a refusal naming the key set", err)
			}
		})
	}
}
