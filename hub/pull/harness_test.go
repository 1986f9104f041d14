package pull_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

const hubURL = "http://127.0.0.1:1/websub"

var t0 = time.Date(2013, 1, 3, 0, 0, 0, 0, time.UTC)

// channels is a fixed ChannelLister.
type channels []hub.Channel

func (c channels) Channels(context.Context) ([]hub.Channel, error) { return c, nil }

// env is a pull server on a real JetStream log.
type env struct {
	t     testing.TB
	nc    *nats.Conn
	log   *jslog.Log
	pull  *pull.Pull
	srv   *httptest.Server
	base  string
	n     int      // notifications appended, for idempotency keys
	chans channels // the channels the env's Pull lists
}

func newEnv(t testing.TB, cfg pull.Config, names ...string) *env {
	t.Helper()
	return newEnvWith(t, cfg, nil, names...)
}

// newEnvWith is newEnv with the log and the channel lister that Pull reads
// passed through wrap first (the env's own log stays the real one).
func newEnvWith(t testing.TB, cfg pull.Config, wrap func(pull.RangeLog, pull.ChannelLister) (pull.RangeLog, pull.ChannelLister), names ...string) *env {
	t.Helper()
	_, nc := testenv.NATS(t)
	l, err := jslog.Open(context.Background(), nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var chans channels
	for _, n := range names {
		chans = append(chans, hub.Channel{Name: n, Topic: "http://example.com/" + n + "/change/", Created: t0})
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cfg.HubURL = hubURL
	cfg.BaseURL = srv.URL
	var pl pull.RangeLog = l
	var lister pull.ChannelLister = chans
	if wrap != nil {
		pl, lister = wrap(l, chans)
	}
	p, err := pull.New(pl, lister, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.Register(mux)
	return &env{t: t, nc: nc, log: l, pull: p, srv: srv, base: srv.URL, chans: chans}
}

// intake returns a hub on the env's log whose store (NATS KV) holds the
// env's channels and chans: the writer through whose intake a Pull
// publishes its framework notifications. Each call is one more hub
// process sharing the log and the store.
func (e *env) intake(chans ...hub.Channel) *hub.Hub {
	e.t.Helper()
	ctx := context.Background()
	st, err := kvstore.Open(ctx, e.nc, kvstore.Config{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, ch := range append(append([]hub.Channel(nil), e.chans...), chans...) {
		if err := st.PutChannel(ctx, ch); err != nil {
			e.t.Fatal(err)
		}
	}
	h, err := hub.New(hub.Config{HubURL: hubURL, Store: st, Log: e.log, Client: http.DefaultClient, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// entries returns n change entries with datetimes spread over [from, until];
// every third has only lastmod, every fourth a link and a hash.
func entries(from, until time.Time, n, salt int) []changefeed.Entry {
	out := make([]changefeed.Entry, n)
	span := until.Sub(from)
	for i := range out {
		at := from.Add(span * time.Duration(i) / time.Duration(max(n, 1)))
		e := changefeed.Entry{Loc: fmt.Sprintf("http://example.com/res/%d/%d", salt, i), MD: &changefeed.MD{Change: changefeed.Updated, Length: -1}}
		if i%3 == 2 {
			e.LastMod = changefeed.NewDateTime(at)
		} else {
			e.MD.DateTime = changefeed.NewDateTime(at)
		}
		if i%4 == 1 {
			e.MD.Hash = "md5:1e0d5cb8ef6ba40c99b14c0237be735e"
			e.MD.Length = int64(100 + i)
			e.MD.Type = "text/html"
			e.Links = []changefeed.Link{{Rel: "duplicate", Href: "http://mirror.example.com/res/" + fmt.Sprint(i), Length: -1, Pri: 1}}
		}
		out[i] = e
	}
	return out
}

// notify appends a change notification built with the changefeed encoder.
func (e *env) notify(channel string, from, until time.Time, es []changefeed.Entry) uint64 {
	e.t.Helper()
	var buf bytes.Buffer
	doc := &changefeed.Document{
		Header: changefeed.Header{Kind: changefeed.URLSet, MD: changefeed.MD{
			Capability: changefeed.CapChangeNotification, Length: -1,
			From: changefeed.NewDateTime(from), Until: changefeed.NewDateTime(until),
		}},
		Entries: es,
	}
	if err := changefeed.Validate(doc, changefeed.Options{}); err != nil {
		e.t.Fatalf("test notification invalid: %v", err)
	}
	if err := changefeed.Encode(&buf, doc); err != nil {
		e.t.Fatal(err)
	}
	e.n++
	seq, _, err := e.log.Append(context.Background(), wire.Record{
		Topic: "http://example.com/" + channel + "/change/", Channel: channel,
		From: from, Until: until, ContentType: "application/xml",
		Key: fmt.Sprintf("k%d", e.n), Entries: len(es), Body: buf.Bytes(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return seq
}

// get fetches url with headers given as name, value pairs and returns the
// response and its body, gunzipped when the response is gzip-encoded.
func (e *env) get(method, url string, hdr ...string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			e.t.Fatalf("GET %s: %v", url, err)
		}
		r = zr
	}
	body, err := io.ReadAll(r)
	if err != nil {
		e.t.Fatalf("GET %s: %v", url, err)
	}
	return resp, body
}

// doc fetches url, requires 200 and returns the document parsed and
// validated in Strict mode.
func (e *env) doc(url string) (*changefeed.Document, *http.Response) {
	e.t.Helper()
	resp, body := e.get("GET", url)
	if resp.StatusCode != 200 {
		e.t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	d, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Strict})
	if err != nil {
		e.t.Fatalf("GET %s: not strictly valid: %v\n%s", url, err, clip(body))
	}
	if err := changefeed.Validate(d, changefeed.Options{}); err != nil {
		e.t.Fatalf("GET %s: Validate: %v", url, err)
	}
	return d, resp
}

func clip(b []byte) []byte {
	if len(b) > 2000 {
		return b[:2000]
	}
	return b
}

// entryKey identifies an entry for comparisons.
func entryKey(e changefeed.Entry) string {
	dt := ""
	if e.MD != nil {
		dt = e.MD.DateTime.Raw + " " + string(e.MD.Change) + " " + e.MD.Hash
	}
	return e.Loc + " " + dt + " " + fmt.Sprint(len(e.Links))
}
