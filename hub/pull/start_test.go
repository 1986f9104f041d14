package pull_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/pull"
)

// TestPull_StartOnTruncatedLogListsChannelsCreatedSince: a process that
// starts on a log whose beginning retention removed lists a channel created
// after the first record the log still holds from its first notification
// (its whole history is in the log), and an older channel only from a list
// that starts at a gap or period boundary.
func TestPull_StartOnTruncatedLogListsChannelsCreatedSince(t *testing.T) {
	rot := changefeed.Rotation{MaxEntries: 2}
	e := newEnv(t, pull.Config{Rotation: rot}, "old")
	var seqs []uint64
	at := t0
	for i := range 4 {
		seqs = append(seqs, e.notify("old", at, at.Add(time.Minute), entries(at, at.Add(time.Minute), 2, i)))
		at = at.Add(time.Minute)
	}
	js, err := jetstream.New(e.nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(context.Background(), jslogStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(context.Background(), jetstream.WithPurgeSequence(seqs[2])); err != nil { // the first two go
		t.Fatal(err)
	}
	created := time.Now() // after the first record the log still holds was received
	var want []string
	for i := range 3 {
		es := entries(at, at.Add(time.Minute), 2, 100+i)
		e.notify("new", at, at.Add(time.Minute), es)
		for _, en := range es {
			want = append(want, entryKey(en))
		}
		at = at.Add(time.Minute)
	}

	// another process starts now
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	chans := channels{
		{Name: "old", Topic: "http://example.com/old/change/", Created: t0},
		{Name: "new", Topic: "http://example.com/new/change/", Created: created},
	}
	p, err := pull.New(e.log, chans, pull.Config{HubURL: hubURL, BaseURL: srv.URL, Rotation: rot})
	if err != nil {
		t.Fatal(err)
	}
	p.Register(mux)
	late := &env{t: t, nc: e.nc, log: e.log, pull: p, srv: srv, base: srv.URL}
	late.checkCrawl(t, "new", want, rot)
	if resp, _ := late.get("GET", srv.URL+"/channels/old/changelist.xml"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("open list of the older channel: %s, want 404 (its history before the log's first record is gone)", resp.Status)
	}
}
