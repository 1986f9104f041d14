package delivery

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// notificationBody encodes a change notification [i s, i+1 s] with one
// updated entry per loc.
func notificationBody(t testing.TB, i int, locs ...string) []byte {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	doc := &changefeed.Document{Header: changefeed.Header{MD: changefeed.MD{
		Capability: changefeed.CapChangeNotification, Length: -1,
		From:  changefeed.NewDateTime(base.Add(time.Duration(i) * time.Second)),
		Until: changefeed.NewDateTime(base.Add(time.Duration(i+1) * time.Second)),
	}}}
	for _, l := range locs {
		doc.Entries = append(doc.Entries, changefeed.Entry{Loc: l, MD: &changefeed.MD{
			Change: changefeed.Updated, Length: -1, DateTime: changefeed.NewDateTime(base.Add(time.Duration(i) * time.Second)),
		}})
	}
	var b bytes.Buffer
	if err := changefeed.Encode(&b, doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// appendBody appends body to the channel's log and returns its sequence.
func (e *env) appendBody(topic, name string, i int, contentType string, body []byte) uint64 {
	e.t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	seq, _, err := e.log.Append(e.ctx(), wire.Record{
		Topic: topic, Channel: name, ContentType: contentType,
		From: base.Add(time.Duration(i) * time.Second), Until: base.Add(time.Duration(i+1) * time.Second),
		Key: fmt.Sprintf("%s-%d", name, i), Body: body,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return seq
}

// subscribeFiltered stores an active subscription with filter f.
func (e *env) subscribeFiltered(topic, callback, secret string, f changefeed.Filter) hub.Subscription {
	e.t.Helper()
	s := e.subscribe(topic, callback, secret)
	s.Filter = &f
	if err := e.store.PutSubscription(e.ctx(), s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func parseBody(t *testing.T, body string) *changefeed.Document {
	t.Helper()
	doc, err := changefeed.Parse(strings.NewReader(body), changefeed.Options{Mode: changefeed.Strict})
	if err != nil {
		t.Fatalf("delivered body does not parse strictly: %v\n%s", err, body)
	}
	return doc
}

func locsOf(doc *changefeed.Document) string {
	var l []string
	for _, e := range doc.Entries {
		l = append(l, e.Loc)
	}
	return strings.Join(l, " ")
}

func TestFilter_DeliversOnlyMatchingEntriesWithTheWindowSignedAsSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	bodies := [][]byte{
		notificationBody(t, 0, "http://s.example/a/1", "http://s.example/b/1", "http://s.example/a/2"),
		notificationBody(t, 1, "http://s.example/b/2"), // no match
		notificationBody(t, 2, "http://s.example/a/3"), // every entry matches
	}
	for i, b := range bodies {
		e.appendBody(topic, "feed", i, "application/xml", b)
	}
	filtered := newReceiver(t, nil)
	plain := newReceiver(t, nil)
	e.subscribeFiltered(topic, filtered.url("/cb"), "s3cret", changefeed.Filter{Prefixes: []string{"http://s.example/a/"}})
	e.subscribe(topic, plain.url("/cb"), "s3cret")
	e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return filtered.count() == 3 && plain.count() == 3 })

	for i, d := range plain.all() {
		if d.Body != string(bodies[i]) {
			t.Errorf("unfiltered delivery %d is not the stored bytes:\n%s", i, d.Body)
		}
	}
	want := []string{"http://s.example/a/1 http://s.example/a/2", "", "http://s.example/a/3"}
	for i, d := range filtered.all() {
		doc := parseBody(t, d.Body)
		stored := parseBody(t, string(bodies[i]))
		if got := locsOf(doc); got != want[i] {
			t.Errorf("delivery %d: entries %q, want %q", i, got, want[i])
		}
		if doc.MD.From != stored.MD.From || doc.MD.Until != stored.MD.Until || doc.MD.Capability != stored.MD.Capability {
			t.Errorf("delivery %d: window %v..%v, stored %v..%v", i, doc.MD.From, doc.MD.Until, stored.MD.From, stored.MD.Until)
		}
		if err := wire.Verify(d.Header.Get(wire.HeaderSignature), "s3cret", []byte(d.Body)); err != nil {
			t.Errorf("delivery %d: signature does not cover the body sent: %v", i, err)
		}
	}
	if got := filtered.all()[2].Body; got != string(bodies[2]) {
		t.Errorf("a notification whose entries all match is re-encoded:\n%s", got)
	}
}

func TestFilter_ChangeTypesAndOtherContentAsIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	doc := &changefeed.Document{Header: changefeed.Header{MD: changefeed.MD{
		Capability: changefeed.CapChangeNotification, Length: -1,
		From: changefeed.NewDateTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), Until: changefeed.NewDateTime(time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC)),
	}}}
	for i, c := range []changefeed.Change{changefeed.Created, changefeed.Updated, changefeed.Deleted} {
		doc.Entries = append(doc.Entries, changefeed.Entry{Loc: fmt.Sprintf("http://s.example/%d", i), MD: &changefeed.MD{Change: c, Length: -1, DateTime: doc.MD.From}})
	}
	var b bytes.Buffer
	if err := changefeed.Encode(&b, doc); err != nil {
		t.Fatal(err)
	}
	e.appendBody(topic, "feed", 0, "application/xml", b.Bytes())
	e.appendBody(topic, "feed", 1, "text/plain", []byte("not a notification"))
	e.appendBody(topic, "feed", 2, "application/xml", []byte(`<feed xmlns="http://www.w3.org/2005/Atom"/>`))
	r := newReceiver(t, nil)
	e.subscribeFiltered(topic, r.url("/cb"), "", changefeed.Filter{Changes: []changefeed.Change{changefeed.Created, changefeed.Deleted}})
	e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return r.count() == 3 })
	got := r.all()
	if l := locsOf(parseBody(t, got[0].Body)); l != "http://s.example/0 http://s.example/2" {
		t.Errorf("change filter kept %q", l)
	}
	if got[1].Body != "not a notification" || got[2].Body != `<feed xmlns="http://www.w3.org/2005/Atom"/>` {
		t.Errorf("other content altered: %q, %q", got[1].Body, got[2].Body)
	}
}

func TestFilter_DeadLetterKeepsTheStoredSequenceAndRedriveFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(int, delivery) int { return http.StatusBadGateway })
	sub := e.subscribeFiltered(topic, r.url("/cb"), "", changefeed.Filter{Prefixes: []string{"http://s.example/a/"}})
	seq := e.appendBody(topic, "feed", 0, "application/xml", notificationBody(t, 0, "http://s.example/a/1", "http://s.example/b/1"))
	cfg := e.fastConfig()
	cfg.Schedule.Attempts = 2
	w, _ := e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seq })
	dls := e.deadLetters(sub.ID)
	if len(dls) != 1 || dls[0].Seq != seq {
		t.Fatalf("dead letters %+v, want one of seq %d", dls, seq)
	}
	r.setRespond(nil)
	if err := w.Redrive(context.Background(), sub.ID, dls[0].ID); err != nil {
		t.Fatalf("Redrive: %v", err)
	}
	all := r.all()
	for _, d := range all {
		if l := locsOf(parseBody(t, d.Body)); l != "http://s.example/a/1" {
			t.Errorf("attempt or redrive delivered %q", l)
		}
	}
}

func TestFilterCache_ComputesOncePerSequenceAndFilterAndStaysBounded(t *testing.T) {
	t.Parallel()
	var c filterCache
	f := &changefeed.Filter{Prefixes: []string{"http://s.example/a/"}}
	body := notificationBody(t, 0, "http://s.example/a/1", "http://s.example/b/1")
	rec := wire.Record{Seq: 1, ContentType: "application/xml", Body: body}
	a, err := c.filteredRecord(rec, f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.filteredRecord(rec, &changefeed.Filter{Prefixes: []string{"http://s.example/a/"}})
	if &a.Body[0] != &b.Body[0] {
		t.Error("equal filters of one sequence encoded twice")
	}
	if same, _ := c.filteredRecord(rec, nil); !bytes.Equal(same.Body, body) {
		t.Error("no filter altered the body")
	}
	for i := range 3 * filterCacheEntries {
		if _, err := c.filteredRecord(wire.Record{Seq: uint64(i + 2), ContentType: "application/xml", Body: body}, f); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > filterCacheEntries || len(c.order) > filterCacheEntries || c.bytes > filterCacheBytes {
		t.Errorf("cache holds %d results (%d ordered, %d bytes); bound %d", len(c.m), len(c.order), c.bytes, filterCacheEntries)
	}
}
