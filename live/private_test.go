package live_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

// channelSet is a live.Channels a test changes.
type channelSet struct {
	mu   sync.Mutex
	m    map[string]hub.Channel
	down bool // the store does not answer
}

func (c *channelSet) ChannelByName(_ context.Context, name string) (hub.Channel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return hub.Channel{}, errors.New("the store does not answer")
	}
	ch, ok := c.m[name]
	if !ok {
		return hub.Channel{}, hub.ErrNotFound
	}
	return ch, nil
}

func (c *channelSet) setPrivate(name string, private bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.m[name]
	ch.Private = private
	c.m[name] = ch
}

// topicOf is the topic hubtest.Record gives channel's records.
func topicOf(channel string) string { return "http://example.com/" + channel + "/changelist.xml" }

// privateWSEnv serves channels pub, other (public) and secret (private),
// readers' tokens signed with an HMAC secret.
func privateWSEnv(t *testing.T) (*wsEnv, *channelSet, *accesstest.Keys) {
	k := accesstest.NewSecret(t)
	return privateWSEnvWith(t, k, k.Verifier(t))
}

// privateWSEnvWith is privateWSEnv verifying readers' tokens with v.
func privateWSEnvWith(t *testing.T, k *accesstest.Keys, v *access.Verifier) (*wsEnv, *channelSet, *accesstest.Keys) {
	chans := &channelSet{m: map[string]hub.Channel{}}
	for _, n := range []string{"pub", "other", "secret"} {
		chans.m[n] = hub.Channel{Name: n, Topic: topicOf(n), Private: n == "secret"}
	}
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{Channels: chans, Readers: v}})
	return e, chans, k
}

// laggingVerifier verifies k's tokens with a clock a minute behind: a
// token that expires in a few seconds passes the handshake however slow
// the machine, and the session it admitted ends at its exp, in real time.
func laggingVerifier(t *testing.T, k *accesstest.Keys) *access.Verifier {
	t.Helper()
	v, err := access.New(access.Config{Key: k.Secret, Now: func() time.Time { return time.Now().Add(-time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func notificationsOf(ms []wsMsg) []string {
	var out []string
	for _, m := range ms {
		if m.Type == "notification" {
			out = append(out, m.Channel)
		}
	}
	return out
}

// A session sees a private channel only with a token covering its topic
// (query parameter, cookie or Bearer header); without one the channel is
// as one that does not exist, a bad token is refused with 401 and a token
// without the claim with 403. channels=* carries the private channels the
// token covers and no other.
func TestPrivate_WebSocketSeesWhatTheTokenCovers(t *testing.T) {
	e, _, k := privateWSEnv(t)
	exp := time.Now().Add(time.Hour).Unix()
	reader := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"http://example.com/{c}/changelist.xml"}, nil, exp, 0))
	other := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{topicOf("pub")}, nil, exp, 0))
	e.append(hubtest.Record("secret", 1))
	last := e.append(hubtest.Record("pub", 1))
	for _, c := range []struct {
		name, query string
		hdr         http.Header
		want        string
	}{
		{"named, no token", query("channels", "secret,pub", "since", "0"), nil, "pub"},
		{"all, no token", query("channels", "*", "since", "0"), nil, "pub"},
		{"all, bad token", query("channels", "*", "since", "0", "authorization", "x.y.z"), nil, "pub"},
		{"named, token in the query", query("channels", "secret,pub", "since", "0", "authorization", reader), nil, "secret,pub"},
		{"all, token in a cookie", query("channels", "*", "since", "0"), http.Header{"Cookie": {"mercureAuthorization=" + reader}}, "secret,pub"},
		{"named, Bearer token", query("channels", "secret,pub", "since", "0"), http.Header{"Authorization": {"Bearer " + reader}}, "secret,pub"},
	} {
		conn, resp, err := e.dial(c.query, c.hdr, 0)
		if err != nil {
			t.Fatalf("%s: %v (%d)", c.name, err, statusOf(resp))
		}
		if got := strings.Join(notificationsOf(readUntil(t, conn, last)), ","); got != c.want {
			t.Errorf("%s: notifications of %s, want %s", c.name, got, c.want)
		}
		conn.Close()
	}
	for _, c := range []struct {
		name, token string
		status      int
		challenge   string
	}{
		{"bad token", "x.y.z", 401, `error="invalid_token"`},
		{"alg none", k.Mint(t, "none", nil, accesstest.Mercure([]string{"*"}, nil, exp, 0)), 401, `error="invalid_token"`},
		{"future nbf", k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"*"}, nil, exp, time.Now().Add(time.Hour).Unix())), 401, "not valid yet"},
		{"another topic", other, 403, "mercure.subscribe"},
	} {
		_, resp, err := e.dial(query("channels", "secret", "authorization", c.token), nil, 0)
		if err == nil || statusOf(resp) != c.status || !strings.Contains(resp.Header.Get("WWW-Authenticate"), c.challenge) {
			t.Errorf("%s: %v %d, want %d %q", c.name, err, statusOf(resp), c.status, c.challenge)
		}
		if _, err := e.openEvents("", query("channels", "secret", "authorization", c.token), nil, 0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("status %d", c.status)) {
			t.Errorf("%s, events: %v, want %d", c.name, err, c.status)
		}
	}
}

// A session admitted to a private channel by a token ends when the token
// expires: WebSocket close code 4401, the Server-Sent Events end event
// with the same code, each naming the cursor to resume from.
func TestPrivate_ExpiredTokenEndsTheSession(t *testing.T) {
	k := accesstest.NewSecret(t)
	e, _, _ := privateWSEnvWith(t, k, laggingVerifier(t, k))
	// the sessions must replay the record before the token expires: a few
	// seconds, on a loaded machine
	tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{topicOf("secret")}, nil, time.Now().Add(5*time.Second).Unix(), 0))
	last := e.append(hubtest.Record("secret", 1))
	conn, resp, err := e.dial(query("channels", "secret", "since", "0", "authorization", tok), nil, 0)
	if err != nil {
		t.Fatalf("%v (%d)", err, statusOf(resp))
	}
	events := e.mustOpenEvents(query("channels", "secret", "since", "0"), http.Header{"Cookie": {"mercureAuthorization=" + tok}})
	ce, got := closeError(t, conn)
	if ce.Code != wire.CloseTokenExpired || !strings.Contains(ce.Text, "token expired") || !strings.Contains(ce.Text, "since=1") || len(seqs(got)) != 1 {
		t.Fatalf("close %d %q after %v", ce.Code, ce.Text, seqs(got))
	}
	evs := events.rest()
	end := evs[len(evs)-1]
	if end.Type != wire.EventEnd || end.end.Code != wire.CloseTokenExpired || eventSeqs(evs)[0] != last {
		t.Fatalf("events %+v, want the notification then the end event with code %d", evs, wire.CloseTokenExpired)
	}
}

// A channel made private stops reaching the sessions without a token for
// it, at once, whatever they named.
func TestPrivate_ChannelMadePrivateStopsReachingTokenlessSessions(t *testing.T) {
	e, chans, _ := privateWSEnv(t)
	all := e.mustDial(query("channels", "*"))
	named := e.mustDial(query("channels", "pub,other"))
	read(t, all)   // live
	read(t, named) // live
	first := e.append(hubtest.Record("pub", 1))
	if got := notificationsOf(readUntil(t, all, first)); strings.Join(got, ",") != "pub" {
		t.Fatalf("public: %v", got)
	}
	readUntil(t, named, first)
	chans.setPrivate("pub", true)
	e.append(hubtest.Record("pub", 2))
	last := e.append(hubtest.Record("other", 1))
	for name, c := range map[string][]wsMsg{"all": readUntil(t, all, last), "named": readUntil(t, named, last)} {
		if got := strings.Join(notificationsOf(c), ","); got != "other" {
			t.Errorf("%s: %s after the channel became private, want other only", name, got)
		}
	}
}

// The records a private channel stored stay private after the channel is
// deleted: a tokenless channels=* session replaying the log gets a deleted
// public channel's records but not a deleted private one's, which a token
// covering its topic still reads.
func TestPrivate_DeletedPrivateChannelStaysPrivateInReplay(t *testing.T) {
	e, _, k := privateWSEnv(t)
	exp := time.Now().Add(time.Hour).Unix()
	reader := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{topicOf("gone")}, nil, exp, 0))
	secret := hubtest.Record("gone", 1)
	secret.Private = true
	e.append(secret)
	last := e.append(hubtest.Record("deleted", 1)) // neither channel exists any more
	for _, c := range []struct {
		name, query string
		want        string
	}{
		{"no token", query("channels", "*", "since", "0"), "deleted"},
		{"a token for its topic", query("channels", "*", "since", "0", "authorization", reader), "gone,deleted"},
	} {
		conn, resp, err := e.dial(c.query, nil, 0)
		if err != nil {
			t.Fatalf("%s: %v (%d)", c.name, err, statusOf(resp))
		}
		if got := strings.Join(notificationsOf(readUntil(t, conn, last)), ","); got != c.want {
			t.Errorf("%s: notifications of %s, want %s", c.name, got, c.want)
		}
		conn.Close()
	}
}

// While the hub's store does not answer, live sessions go on from the log:
// a public channel's records still reach a tokenless session, and a record
// stored while its channel was private does not.
func TestPrivate_StoreDownLiveGoesOnAndPrivateRecordsStayHidden(t *testing.T) {
	e, chans, _ := privateWSEnv(t)
	all := e.mustDial(query("channels", "*"))
	read(t, all) // live
	chans.mu.Lock()
	chans.down = true
	chans.mu.Unlock()
	secret := hubtest.Record("secret", 1)
	secret.Private = true
	e.append(secret)
	e.append(hubtest.Record("pub", 1))
	last := e.append(hubtest.Record("other", 1))
	if got := strings.Join(notificationsOf(readUntil(t, all, last)), ","); got != "pub,other" {
		t.Fatalf("with the store down: notifications of %s, want pub,other", got)
	}
}
