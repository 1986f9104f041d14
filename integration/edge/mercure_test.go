package edge_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/wire"
)

// A Mercure topic that is no URL published through an edge is the
// origin's: the edge forwards the publish to the origin's Mercure face,
// which maps the raw topic with its own origin, and Mercure subscribers
// matching the raw string at the origin and at the edge (which reads it
// with its origin's URL) both receive the update.
func TestEdgeMercure_RawTopicsAreTheOrigins(t *testing.T) {
	t.Parallel()
	k := accesstest.NewSecret(t)
	const aud = "https://hub.example/.well-known/mercure" // one audience for the origin and its edges
	keys := []string{"--publisher-jwt-key", k.Secret, "--mercure-audience", aud}
	origin, leaf := originWithLeaf(t, "", append([]string{"--open-topics"}, keys...)...)
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	edge := edgeOf(t, origin, p, keys...)
	edge.awaitReadyz(200, "ready", 60*time.Second)

	atOrigin, atEdge := mercureData(t, origin.hubProc, "orders"), mercureData(t, edge.hubProc, "orders")
	tok := k.Mint(t, "HS256", map[string]any{"typ": "at+jwt"}, map[string]any{
		"exp": time.Now().Add(time.Hour).Unix(), "aud": aud,
		"authorization_details": []any{map[string]any{"type": access.DetailType, "actions": []string{"publish"},
			"topics": []any{map[string]any{"match_type": "exact", "match": "orders"}}}},
	})
	req, _ := http.NewRequest(http.MethodPost, edge.url+strings.TrimPrefix(wire.PathMercure, "/"),
		strings.NewReader(url.Values{"topic": {"orders"}, "data": {"through the edge"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("Mercure publish of a raw topic through the edge: %d %s", resp.StatusCode, b)
	}
	for name, got := range map[string]<-chan string{"origin": atOrigin, "edge": atEdge} {
		select {
		case d := <-got:
			if d != "through the edge" {
				t.Fatalf("the subscriber of \"orders\" at the %s got %q", name, d)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("the subscriber of \"orders\" at the %s got nothing within 60s", name)
		}
	}
	want := wire.MercureTopicURL(strings.TrimSuffix(origin.url, "/"), "orders")
	if code, body := origin.adminDo(http.MethodGet, "/admin/channels?q=orders", ""); code != 200 || !strings.Contains(body, want) {
		t.Fatalf("the origin's channel of \"orders\" is not %s: %d %.300s", want, code, body)
	}
}

// mercureData subscribes to the Mercure topic match at h and returns the
// data of the updates that arrive, once the stream's headers arrived.
func mercureData(t *testing.T, h *hubProc, match string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url+strings.TrimPrefix(wire.PathMercure, "/")+"?"+url.Values{"match": {match}}.Encode(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("subscribing at %s: %v", h.name, err)
	}
	if resp.StatusCode != 200 {
		cancel()
		t.Fatalf("subscribing at %s: %s", h.name, resp.Status)
	}
	out := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case out <- d:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return out
}
