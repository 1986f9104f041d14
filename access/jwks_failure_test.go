package access_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/access/accesstest"
)

// A key set that hangs, answers garbage, 500, an empty set or a redirect
// is reported to the operator (OnKeySetError, with the URL and the cause)
// and in KeySetState, and the caller is told only that the key set is
// unavailable: no URL, no Go error.
func TestJWKS_FailuresReachTheOperatorNotTheCaller(t *testing.T) {
	k := accesstest.NewKeys(t)
	token := k.Mint(t, "RS256", map[string]any{"kid": "a"}, accesstest.Mercure([]string{"*"}, nil, time.Now().Add(time.Hour).Unix(), 0))
	good := &keySet{}
	good.set(t, accesstest.JWK(t, k.RSA, "a"))
	for name, h := range map[string]http.Handler{
		"hangs":     &keySet{hang: true},
		"garbage":   &keySet{body: "<html>not a key set</html>"},
		"500":       http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) }),
		"empty set": &keySet{body: `{"keys":[]}`},
		"redirect": func() http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/real", good)
			mux.Handle("/", http.RedirectHandler("/real", http.StatusFound))
			return mux
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			var mu sync.Mutex
			var reported []error
			v, err := access.New(access.Config{JWKSURL: srv.URL + "/jwks", Client: srv.Client(), OnKeySetError: func(err error) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, err)
			}})
			if err != nil {
				t.Fatal(err)
			}
			if failing, _, _ := v.KeySetState(); failing {
				t.Fatal("failing before any read")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err = v.Verify(ctx, token)
			if !errors.Is(err, access.ErrKeySetUnavailable) || err.Error() != access.ErrKeySetUnavailable.Error() {
				t.Fatalf("the caller was told %v, want only %q", err, access.ErrKeySetUnavailable)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reported) != 1 || !strings.Contains(reported[0].Error(), srv.URL) {
				t.Fatalf("the operator was told %v, want one failure naming the URL", reported)
			}
			failing, since, cause := v.KeySetState()
			if !failing || since.IsZero() || cause == nil {
				t.Fatalf("KeySetState %v %v %v, want failing with a cause", failing, since, cause)
			}
		})
	}
}

// A key set that fails and mends shows mended in RecheckKeySet once the
// refetch interval has passed, without a token arriving.
func TestJWKS_RecheckSeesTheSetMend(t *testing.T) {
	k := accesstest.NewKeys(t)
	ks := &keySet{body: "not yet"}
	srv := httptest.NewServer(ks)
	defer srv.Close()
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	v, err := access.New(access.Config{JWKSURL: "HTTP://" + strings.TrimPrefix(srv.URL, "http://") + "/keys", Client: srv.Client(), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	token := k.Mint(t, "RS256", map[string]any{"kid": "a"}, accesstest.Mercure([]string{"*"}, nil, now.Add(time.Hour).Unix(), 0))
	if _, err := v.Verify(context.Background(), token); !errors.Is(err, access.ErrKeySetUnavailable) {
		t.Fatalf("Verify with the set failing: %v", err)
	}
	ks.set(t, accesstest.JWK(t, k.RSA, "a"))
	if failing, _ := v.RecheckKeySet(context.Background()); !failing {
		t.Fatal("read again before the refetch interval")
	}
	advance(access.JWKSRefetch)
	if failing, _ := v.RecheckKeySet(context.Background()); failing {
		t.Fatalf("still failing after the set mended: %v", func() error { _, _, err := v.KeySetState(); return err }())
	}
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("Verify after the set mended: %v", err)
	}
}
