package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/wire"
)

// --subscriber-jwt-audience and --subscriber-jwt-issuer make a whole hub
// refuse subscriber tokens for another audience or from another issuer.
func TestPrivateChannel_AudienceAndIssuerFlags(t *testing.T) {
	k := accesstest.NewSecret(t)
	st := privateHub(t, func(c *server.Config) {
		c.SubscriberJWTKey, c.SubscriberJWTAudience, c.SubscriberJWTIssuer = k.Secret, "https://hub.example/", "https://idp.example/"
	})
	base := "http://" + st.Addr
	mint := func(aud, iss string) string {
		c := accesstest.Mercure([]string{base + wire.TopicPath("secret")}, nil, time.Now().Add(time.Hour).Unix(), 0)
		c["aud"], c["iss"] = aud, iss
		return k.Mint(t, "HS256", nil, c)
	}
	for name, tc := range map[string]struct {
		token  string
		status int
	}{
		"the hub's audience and issuer": {mint("https://hub.example/", "https://idp.example/"), http.StatusOK},
		"another audience":              {mint("https://other.example/", "https://idp.example/"), http.StatusUnauthorized},
		"another issuer":                {mint("https://hub.example/", "https://evil.example/"), http.StatusUnauthorized},
	} {
		s, _ := get(t, base+wire.ChangeListPath("secret"), "Authorization", "Bearer "+tc.token)
		if s != tc.status {
			t.Errorf("%s: %d, want %d", name, s, tc.status)
		}
	}
	_, h := getHeader(t, base+wire.ChangeListPath("secret"), "Authorization", "Bearer "+mint("https://other.example/", "https://idp.example/"))
	if !strings.Contains(h.Get("WWW-Authenticate"), "aud") {
		t.Errorf("WWW-Authenticate %q, want the reason naming aud", h.Get("WWW-Authenticate"))
	}
}

// getHeader answers GET u with headers given as name, value pairs: status,
// response headers.
func getHeader(t *testing.T, u string, hdr ...string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}
