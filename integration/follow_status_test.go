package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	pullsource "github.com/rshub/rshub/examples/pullsource/source"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
)

// Two hubs sharing one store (the default NATS KV, or Redis) answer GET
// /admin/follow the same: the status of the hub that follows the channel,
// from the store. When that hub stops, the other takes the channel over
// and its own status shows on both.
func TestFollowStatus_EveryHubOfAClusterShowsTheOwnersStatus(t *testing.T) {
	for _, backend := range []string{"nats-kv", "redis"} {
		t.Run(backend, func(t *testing.T) {
			ns := testenv.RestartableNATS(t)
			ctx := context.Background()
			var claim func(key, owner string) (bool, error)
			redisURL := ""
			if backend == "redis" {
				redisURL = testenv.Redis(t)
				rs, err := redisstore.Open(ctx, redisURL, redisstore.Config{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = rs.Close() })
				claim = func(key, owner string) (bool, error) { return rs.Claim(ctx, key, owner, time.Minute) }
			} else {
				nc, err := nats.Connect(ns.URL())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(nc.Close)
				ks, err := kvstore.Open(ctx, nc, kvstore.Config{})
				if err != nil {
					t.Fatal(err)
				}
				claim = func(key, owner string) (bool, error) { return ks.Claim(ctx, key, owner, time.Minute) }
			}
			shared := func(owner string) func(*server.Config) {
				return func(c *server.Config) {
					c.NATSURL, c.RedisURL, c.Owner, c.Demo, c.ClaimTTL = ns.URL(), redisURL, owner, false, 3*time.Second
				}
			}
			// hub-a follows the channel: the test takes its claim in its
			// name before either hub reads the channel
			if ok, err := claim("follow/shared", "hub-a"); !ok || err != nil {
				t.Fatalf("claim for hub-a: %v %v", ok, err)
			}
			src := startFollowSource(t, pullsource.Config{RotateEvery: 4})
			rcv := newFollowReceiver(t)
			b := startFollowHub(t, shared("hub-b"))
			var aPoll time.Time
			t.Run("hub-a follows", func(t *testing.T) { // hub-a stops when this ends
				a := startFollowHub(t, shared("hub-a"))
				followChannel(t, a, map[string]any{"name": "shared", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)
				src.src.Change(5)
				caughtUp(t, src.src, rcv, "followed by hub-a")
				var same []clusterStatus
				waitFor(t, 10*time.Second, "both hubs answer hub-a's status", func() bool {
					sa, ra := follows(t, a)
					sb, rb := follows(t, b)
					same = sb
					return bytes.Equal(ra, rb) && len(sa) == 1 && sa[0].Owner == "hub-a" && sa[0].Polls > 0
				})
				if s := same[0]; s.Expired || s.LastPoll.IsZero() || s.Updated.IsZero() || s.LastError != "" {
					t.Errorf("hub-a's status: %+v", s)
				}
				aPoll = same[0].LastPoll
				if backend == "nats-kv" { // hub-b's dashboard shows the hub that follows
					br := newDashBrowser(t, 2*time.Minute)
					br.run("open hub-b's dashboard", chromedp.Navigate(strings.TrimSuffix(b.url, "/")+"/dashboard/#token="+b.token))
					br.waitFor("hub-a in hub-b's Followed Sources card", 20*time.Second, fmt.Sprintf(
						`(() => { const c = document.querySelector(%q); return !!c && c.textContent.endsWith(" · hub-a") && c.title.startsWith("status written by hub-a"); })()`,
						`#follows tr[data-channel="shared"] td:nth-child(8)`))
				}
			})
			// a failure below shows what hub-b holds, not the stopped hub-a
			rcv.hubView = func() string {
				return fmt.Sprintf("hub-b's channel: %s; its follow status: %s; its subscriptions: %s; its readiness: %s",
					b.show("/admin/channels/shared"), b.show("/admin/follow"), b.show("/admin/subscriptions"), b.show("/readyz"))
			}
			src.src.Change(4)
			caughtUp(t, src.src, rcv, "followed by hub-b once hub-a stopped")
			waitFor(t, 10*time.Second, "hub-b's own status", func() bool {
				s, _ := follows(t, b)
				return len(s) == 1 && s[0].Owner == "hub-b" && !s[0].Expired && s[0].Polls > 0 && s[0].LastPoll.After(aPoll)
			})
		})
	}
}

// clusterStatus is what the test reads of a follow status.
type clusterStatus struct {
	Channel, Owner, LastError string
	Polls                     int
	Expired                   bool
	LastPoll, Updated         time.Time
}

// follows returns GET /admin/follow of h, decoded and raw.
func follows(t *testing.T, h followHub) ([]clusterStatus, []byte) {
	t.Helper()
	code, raw := h.do(t, http.MethodGet, "/admin/follow", nil)
	var st []clusterStatus
	if err := json.Unmarshal(raw, &st); code != http.StatusOK || err != nil {
		t.Fatalf("GET /admin/follow: %d %v %s", code, err, raw)
	}
	return st, raw
}
