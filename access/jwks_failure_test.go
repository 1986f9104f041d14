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
