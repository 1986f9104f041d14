package access_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/access/accesstest"
)

// suiteToken is the token of Mercure's conformance suite: HS256 with the
// key suiteKey, typ at+jwt, aud https://localhost/.well-known/mercure,
// iss https://localhost, publish and subscribe on "*".
const (
	suiteKey   = "!ChangeThisMercureHubJWTSecretKey!"
	suiteToken = "eyJhbGciOiJIUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJhdWQiOiJodHRwczovL2xvY2FsaG9zdC8ud2VsbC1rbm93bi9tZXJjdXJlIiwiaXNzIjoiaHR0cHM6Ly9sb2NhbGhvc3QiLCJhdXRob3JpemF0aW9uX2RldGFpbHMiOlt7InR5cGUiOiJodHRwczovL21lcmN1cmUucm9ja3MvYXV0aG9yaXphdGlvbi1kZXRhaWwiLCJhY3Rpb25zIjpbInB1Ymxpc2giXSwidG9waWNzIjpbeyJtYXRjaCI6IioifV19LHsidHlwZSI6Imh0dHBzOi8vbWVyY3VyZS5yb2Nrcy9hdXRob3JpemF0aW9uLWRldGFpbCIsImFjdGlvbnMiOlsic3Vic2NyaWJlIl0sInRvcGljcyI6W3sibWF0Y2giOiIqIn1dfV0sImV4cCI6NDEwMjQ0NDgwMH0.z_S8IP5WZsCK8h3pcq0PB5zvJE0OdTrGA70khAYJQy4"
)

var suiteRules = access.AccessRules{Audience: "https://localhost/.well-known/mercure", Issuer: "https://localhost"}

func TestVerifyAccess_ConformanceSuiteTokenGrantsEverything(t *testing.T) {
	v, err := access.New(access.Config{Key: suiteKey})
	if err != nil {
		t.Fatal(err)
	}
	g, err := v.VerifyAccess(context.Background(), suiteToken, suiteRules)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Allows(access.Publish, "https://example.net/foo/1") || !g.Allows(access.Subscribe, "abc") {
		t.Fatal("the suite's token does not grant publish and subscribe on every topic")
	}
	for _, r := range []access.AccessRules{
		{Audience: "https://other.example/.well-known/mercure", Issuer: suiteRules.Issuer},
		{Audience: suiteRules.Audience, Issuer: "https://evil.example"},
	} {
		if _, err := v.VerifyAccess(context.Background(), suiteToken, r); err == nil {
			t.Errorf("rules %+v: the token was accepted", r)
		}
	}
}

func TestVerifyAccess_DetailsGrantByActionAndMatcher(t *testing.T) {
	k := accesstest.NewSecret(t)
	v := k.Verifier(t)
	exp := time.Now().Add(time.Hour).Unix()
	at := map[string]any{"typ": "at+jwt"}
	claims := func(details any) map[string]any {
		return map[string]any{"exp": exp, "aud": []string{suiteRules.Audience}, "iss": suiteRules.Issuer, "authorization_details": details}
	}
	tok := k.Mint(t, "HS256", at, claims([]any{
		map[string]any{"type": access.DetailType, "actions": []string{"subscribe", "fly"}, "topics": []any{
			map[string]any{"match": "https://e/books/:id", "match_type": "urlpattern"},
			map[string]any{"match": "https://e/exact"},
		}},
		map[string]any{"type": "https://other.example/detail", "whatever": true},
	}))
	g, err := v.VerifyAccess(context.Background(), tok, suiteRules)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]bool{"https://e/books/7": true, "https://e/books/7/x": false, "https://e/exact": true, "https://e/exact2": false} {
		if got := g.Allows(access.Subscribe, topic); got != want {
			t.Errorf("subscribe %s: %v, want %v", topic, got, want)
		}
		if g.Allows(access.Publish, topic) {
			t.Errorf("publish %s granted by a subscribe detail", topic)
		}
	}

	for name, tc := range map[string]struct {
		header map[string]any
		claims map[string]any
		want   string
	}{
		"no typ":         {nil, claims([]any{}), "typ"},
		"no exp":         {at, map[string]any{"aud": suiteRules.Audience, "iss": suiteRules.Issuer, "authorization_details": []any{}}, "exp"},
		"wrong aud":      {at, map[string]any{"exp": exp, "aud": "https://x", "iss": suiteRules.Issuer}, "aud"},
		"bad match_type": {at, claims([]any{map[string]any{"type": access.DetailType, "actions": []string{"publish"}, "topics": []any{map[string]any{"match": "x", "match_type": "regex"}}}}), "match_type"},
		"bad pattern":    {at, claims([]any{map[string]any{"type": access.DetailType, "actions": []string{"publish"}, "topics": []any{map[string]any{"match": "https://e/(\\d+)", "match_type": "urlpattern"}}}}), "matcher 0"},
		"no topics":      {at, claims([]any{map[string]any{"type": access.DetailType, "actions": []string{"publish"}, "topics": []any{}}}), "topic matchers"},
		"non-string act": {at, claims([]any{map[string]any{"type": access.DetailType, "actions": []any{1}, "topics": []any{map[string]any{"match": "x"}}}}), "detail 0"},
		"not an array":   {at, claims(map[string]any{"type": access.DetailType}), "not an array"},
	} {
		tok := k.Mint(t, "HS256", tc.header, tc.claims)
		if _, err := v.VerifyAccess(context.Background(), tok, suiteRules); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, tc.want)
		}
	}
}

func TestVerifyAccess_OlderMercureClaimStillAccepted(t *testing.T) {
	k := accesstest.NewSecret(t)
	tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"https://e/{id}"}, []string{"https://e/p"}, time.Now().Add(time.Hour).Unix(), 0))
	g, err := k.Verifier(t).VerifyAccess(context.Background(), tok, suiteRules)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Allows(access.Subscribe, "https://e/1") || !g.Allows(access.Publish, "https://e/p") || g.Allows(access.Publish, "https://e/1") {
		t.Fatal("the mercure claim's selectors are not the grant")
	}
}

// Verify reads an access token's authorization_details by the Verifier's
// own rules (Config.Access), as VerifyAccess does, so every face that
// calls it reads the same grant; a token that breaks the rules is
// refused, and crit is refused as for any token.
func TestVerify_ReadsAccessTokensByTheVerifiersRules(t *testing.T) {
	v, err := access.New(access.Config{Key: suiteKey, Access: suiteRules})
	if err != nil {
		t.Fatal(err)
	}
	g, err := v.Verify(context.Background(), suiteToken)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Allows(access.Subscribe, "https://example.net/private") || !g.Allows(access.Publish, "raw") {
		t.Fatal("Verify read no grant from the token's authorization_details")
	}
	strict, err := access.New(access.Config{Key: suiteKey, Access: access.AccessRules{Audience: "https://other.example/.well-known/mercure"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.Verify(context.Background(), suiteToken); err == nil || !strings.Contains(err.Error(), "aud") {
		t.Fatalf("a token for another audience: %v, want refused naming aud", err)
	}
	k := accesstest.NewSecret(t)
	crit := k.Mint(t, "HS256", map[string]any{"typ": "at+jwt", "crit": []string{"x"}, "x": 1}, map[string]any{"exp": time.Now().Add(time.Hour).Unix()})
	if _, err := k.Verifier(t).VerifyAccess(context.Background(), crit, access.AccessRules{}); err == nil || !strings.Contains(err.Error(), "crit") {
		t.Fatalf("a token with crit: %v, want refused", err)
	}
}
