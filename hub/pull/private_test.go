package pull_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/wire"
)

// privateEnv serves channels "pub" and "secret" (private), one
// notification each, with readers' tokens signed by an HMAC secret.
func privateEnv(t *testing.T) (*env, *accesstest.Keys) {
	k := accesstest.NewSecret(t)
	e := newEnvWith(t, pull.Config{Readers: k.Verifier(t), Rotation: changefeed.Rotation{MaxEntries: 1}},
		func(l pull.RangeLog, c pull.ChannelLister) (pull.RangeLog, pull.ChannelLister) {
			chans := append(channels(nil), c.(channels)...)
			chans[1].Private = true
			return l, chans
		}, "pub", "secret")
	for _, name := range []string{"pub", "secret"} {
		e.notify(name, t0, t0.Add(time.Minute), entries(t0, t0.Add(time.Minute), 1, 0))
		e.notify(name, t0.Add(time.Minute), t0.Add(2*time.Minute), entries(t0.Add(time.Minute), t0.Add(2*time.Minute), 1, 1))
	}
	return e, k
}

// channelDocs are the paths of every per-channel document of name, whose
// first Change List starts at sequence first.
func channelDocs(name string, first uint64) []string {
	return []string{
		wire.CapabilityListPath(name), wire.ChangeListPath(name), wire.ChangeListIndexPath(name),
		wire.ChangeListArchivePath(name), wire.ChangeListFilePath(name, first), wire.FeedPath(name),
	}
}

// Every document of a private channel answers a caller without a token
// exactly as the documents of a channel that does not exist, a bad token
// 401 with an RFC 6750 challenge, a token for another topic 403, and a
// reader's token (header, cookie or query) the document, marked private.
func TestPrivate_ChannelDocumentsNeedTheSubscribeClaim(t *testing.T) {
	e, k := privateEnv(t)
	exp := time.Now().Add(time.Hour).Unix()
	reader := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"http://example.com/{name}/change/"}, nil, exp, 0))
	other := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"http://example.com/pub/change/"}, nil, exp, 0))
	for i, path := range channelDocs("secret", 3) {
		none := channelDocs("none", 3)[i]
		ur, ub := e.get("GET", e.base+none)
		pr, pb := e.get("GET", e.base+path)
		if pr.StatusCode != 404 || ur.StatusCode != 404 || !bytes.Equal(pb, ub) || pr.Header.Get("Link") != "" {
			t.Errorf("%s without a token: %d %q, unknown channel %d %q", path, pr.StatusCode, pb, ur.StatusCode, ub)
		}
		for _, c := range []struct {
			name   string
			hdr    []string
			status int
			want   string
		}{
			{"bad token", []string{"Authorization", "Bearer x.y.z"}, 401, `error="invalid_token"`},
			{"expired token", []string{"Cookie", "mercureAuthorization=" + k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"*"}, nil, time.Now().Add(-time.Hour).Unix(), 0))}, 401, "expired"},
			{"another topic", []string{"Authorization", "Bearer " + other}, 403, "mercure.subscribe"},
		} {
			r, _ := e.get("GET", e.base+path, c.hdr...)
			if r.StatusCode != c.status || !strings.Contains(r.Header.Get("WWW-Authenticate"), c.want) {
				t.Errorf("%s, %s: %d %q", path, c.name, r.StatusCode, r.Header.Get("WWW-Authenticate"))
			}
		}
		if r, _ := e.get("GET", e.base+none, "Authorization", "Bearer x.y.z"); r.StatusCode != 401 {
			t.Errorf("%s with a bad token: %d, want 401 as for a private channel", none, r.StatusCode)
		}
		pub, _ := e.get("GET", e.base+channelDocs("pub", 1)[i], "Authorization", "Bearer x.y.z")
		if pub.StatusCode != 200 || strings.HasPrefix(pub.Header.Get("Cache-Control"), "private") {
			t.Errorf("public %s with a bad token: %d %q, want it served as before", channelDocs("pub", 1)[i], pub.StatusCode, pub.Header.Get("Cache-Control"))
		}
		for _, hdr := range [][]string{{"Authorization", "Bearer " + reader}, {"Cookie", "mercureAuthorization=" + reader}} {
			r, body := e.get("GET", e.base+path, hdr...)
			if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Cache-Control"), "private") {
				t.Errorf("%s for a reader (%s): %d %q %.100s", path, hdr[0], r.StatusCode, r.Header.Get("Cache-Control"), body)
			}
		}
		if r, _ := e.get("GET", e.base+path+"?authorization="+reader); r.StatusCode != 200 {
			t.Errorf("%s with the token as a query parameter: %d", path, r.StatusCode)
		}
	}
}

// The Source Description and robots.txt leave a private channel out for
// anyone but its readers, and never refuse a bad token.
func TestPrivate_ListingsLeaveOutWhatTheCallerMayNotRead(t *testing.T) {
	e, k := privateEnv(t)
	reader := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"http://example.com/secret/change/"}, nil, time.Now().Add(time.Hour).Unix(), 0))
	for _, path := range []string{wire.PathWellKnown, "/robots.txt"} {
		for _, c := range []struct {
			name    string
			hdr     []string
			private bool
		}{
			{"no token", nil, false},
			{"bad token", []string{"Authorization", "Bearer x.y.z"}, false},
			{"reader", []string{"Authorization", "Bearer " + reader}, true},
		} {
			r, body := e.get("GET", e.base+path, c.hdr...)
			if r.StatusCode != 200 || !bytes.Contains(body, []byte("/pub/")) {
				t.Fatalf("%s, %s: %d %s", path, c.name, r.StatusCode, body)
			}
			if got := bytes.Contains(body, []byte("secret")); got != c.private {
				t.Errorf("%s, %s: lists the private channel: %v, want %v", path, c.name, got, c.private)
			}
			if got := strings.HasPrefix(r.Header.Get("Cache-Control"), "private"); got != c.private {
				t.Errorf("%s, %s: Cache-Control %q", path, c.name, r.Header.Get("Cache-Control"))
			}
		}
	}
}
