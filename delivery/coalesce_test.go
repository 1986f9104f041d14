package delivery

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// rsSource makes a consistent history of change notifications over a set
// of resources (created only when absent, updated or deleted only when
// present) and keeps the state they lead to.
type rsSource struct {
	rng   *rand.Rand
	locs  int
	state map[string]string // loc → hash
	t     time.Time
	n     int
}

func newRSSource(seed uint64, locs int) *rsSource {
	return &rsSource{
		rng: rand.New(rand.NewPCG(seed, 1)), locs: locs, state: map[string]string{},
		t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// next returns the next notification, with k entries, and its window.
func (s *rsSource) next(t testing.TB, k int) (body []byte, from, until time.Time) {
	t.Helper()
	from = s.t
	doc := &changefeed.Document{Header: changefeed.Header{MD: changefeed.MD{
		Capability: changefeed.CapChangeNotification, Length: -1, From: changefeed.NewDateTime(from),
	}}}
	for range k {
		s.n++
		loc := fmt.Sprintf("http://example.org/%s/%d", []string{"a", "b"}[s.rng.IntN(2)], s.rng.IntN(s.locs))
		change := changefeed.Created
		if _, ok := s.state[loc]; ok {
			change = changefeed.Updated
			if s.rng.IntN(4) == 0 {
				change = changefeed.Deleted
			}
		}
		hash := fmt.Sprintf("md5:%032x", s.n)
		if change == changefeed.Deleted {
			delete(s.state, loc)
		} else {
			s.state[loc] = hash
		}
		s.t = s.t.Add(time.Second)
		doc.Entries = append(doc.Entries, changefeed.Entry{Loc: loc, MD: &changefeed.MD{
			Change: change, Hash: hash, Length: -1, DateTime: changefeed.NewDateTime(s.t),
		}})
	}
	s.t = s.t.Add(time.Second)
	until = s.t
	doc.MD.Until = changefeed.NewDateTime(until)
	var b bytes.Buffer
	if err := changefeed.Encode(&b, doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), from, until
}

// publish appends the next notification to the channel.
func (s *rsSource) publish(e *env, topic, name string, k int) uint64 {
	e.t.Helper()
	body, from, until := s.next(e.t, k)
	seq, _, err := e.log.Append(e.ctx(), wire.Record{
		Topic: topic, Channel: name, ContentType: "application/xml", From: from, Until: until,
		Key: fmt.Sprintf("%s-%d", name, s.n), Body: body, Entries: k,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return seq
}

// destination is a callback that applies what it accepts to its state.
type destination struct {
	r       *receiver
	offline atomic.Bool
	mu      sync.Mutex
	state   map[string]string
	docs    []*changefeed.Document // accepted change notifications
	seqs    []uint64               // Rshub-Seq of every accepted delivery
	other   []string               // accepted bodies of other content
}

func newDestination(t *testing.T) *destination {
	d := &destination{state: map[string]string{}}
	d.offline.Store(true)
	d.r = newReceiver(t, func(_ int, got delivery) int {
		if d.offline.Load() {
			return http.StatusServiceUnavailable
		}
		seq, _ := strconv.ParseUint(got.Header.Get(wire.HeaderSeq), 10, 64)
		d.mu.Lock()
		defer d.mu.Unlock()
		d.seqs = append(d.seqs, seq)
		if !strings.HasPrefix(got.Header.Get(wire.HeaderContentType), "application/xml") {
			d.other = append(d.other, got.Body)
			return http.StatusOK
		}
		doc, err := changefeed.Parse(strings.NewReader(got.Body), changefeed.Options{Mode: changefeed.Strict})
		if err != nil {
			t.Errorf("delivery %d does not parse strictly: %v", seq, err)
			return http.StatusOK
		}
		if err := changefeed.Validate(doc, changefeed.Options{Mode: changefeed.Strict}); err != nil {
			t.Errorf("delivery %d is not a valid notification: %v", seq, err)
		}
		for _, e := range doc.Entries {
			if e.MD.Change == changefeed.Deleted {
				delete(d.state, e.Loc)
			} else {
				d.state[e.Loc] = e.MD.Hash
			}
		}
		d.docs = append(d.docs, doc)
		return http.StatusOK
	})
	return d
}

func (d *destination) snapshot() (map[string]string, []*changefeed.Document, []uint64, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.state), append([]*changefeed.Document(nil), d.docs...), append([]uint64(nil), d.seqs...), append([]string(nil), d.other...)
}

// restrict returns the part of state whose locs start with prefix.
func restrict(state map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range state {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

// TestWebhooks_CoalescedCatchUp: subscribers offline (503) during 100
// notifications, one of them plain text, then back: a default subscription
// receives a few coalesced notifications (at most MaxEntries entries each,
// contiguous windows, strictly valid) and ends in the Source's state; an
// opted-out one receives every notification; a filtered one ends in the
// Source's state restricted to its prefix; the text arrives once, in order.
func TestWebhooks_CoalescedCatchUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const topic, name = "https://example.org/src", "src"
	e.channel(topic, name)
	src := newRSSource(1, 60)
	all, off, filtered := newDestination(t), newDestination(t), newDestination(t)
	subAll := e.subscribe(topic, all.r.url("/all"), "")
	subOff := e.subscribe(topic, off.r.url("/off"), "")
	subOff.Coalesce = wire.CoalesceOff
	if err := e.store.PutSubscription(e.ctx(), subOff); err != nil {
		t.Fatal(err)
	}
	subF := e.subscribeFiltered(topic, filtered.r.url("/f"), "", changefeed.Filter{Prefixes: []string{"http://example.org/a/"}})

	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: time.Millisecond, Max: 5 * time.Millisecond, Multiplier: 2} // never gives up
	cfg.Coalesce = CoalesceConfig{Threshold: 50, MaxEntries: 25}
	e.start(cfg)

	src.publish(e, topic, name, 3)
	testenv.Eventually(t, wait, func() bool { return all.r.count() > 0 && off.r.count() > 0 && filtered.r.count() > 0 }, "first attempts")
	const notes = 100 // about 250 entries: ten coalesced notifications or more
	var textSeq, last uint64
	for i := 1; i < notes; i++ {
		if i == notes/2 {
			textSeq = e.appendBody(topic, name, 100000, "text/plain", []byte("plain text in the run"))
			continue
		}
		last = src.publish(e, topic, name, 1+i%4)
	}
	for _, d := range []*destination{all, off, filtered} {
		d.offline.Store(false)
	}
	testenv.Eventually(t, wait, func() bool {
		return e.cursor(subAll.ID).Seq == last && e.cursor(subOff.ID).Seq == last && e.cursor(subF.ID).Seq == last
	}, "every subscription caught up")

	check := func(label string, d *destination, want map[string]string, maxDeliveries int) {
		t.Helper()
		state, docs, seqs, other := d.snapshot()
		if !maps.Equal(state, want) {
			t.Errorf("%s: destination state differs from the Source's: %d resources, want %d", label, len(state), len(want))
		}
		if len(other) != 1 || other[0] != "plain text in the run" {
			t.Errorf("%s: other content %q, want the text once", label, other)
		}
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Errorf("%s: Rshub-Seq %d after %d", label, seqs[i], seqs[i-1])
			}
		}
		if seqs[len(seqs)-1] != last {
			t.Errorf("%s: last Rshub-Seq %d, want %d", label, seqs[len(seqs)-1], last)
		}
		for i := 1; i < len(docs); i++ {
			if !docs[i].MD.From.Time.Equal(docs[i-1].MD.Until.Time) {
				t.Errorf("%s: notification %d starts at %s, previous until %s", label, i, docs[i].MD.From.Raw, docs[i-1].MD.Until.Raw)
			}
		}
		if len(seqs) > maxDeliveries {
			t.Errorf("%s: %d deliveries, want at most %d", label, len(seqs), maxDeliveries)
		}
		t.Logf("%s: %d deliveries", label, len(seqs))
	}
	check("coalesced", all, src.state, notes/5)
	check("filtered", filtered, restrict(src.state, "http://example.org/a/"), notes/5)
	check("opted out", off, src.state, notes)
	if _, _, seqs, _ := off.snapshot(); len(seqs) != notes {
		t.Errorf("opted out: %d deliveries, want %d", len(seqs), notes)
	}
	_, docs, seqs, _ := all.snapshot()
	for _, d := range docs {
		if len(d.Entries) > 25 {
			t.Errorf("coalesced notification with %d entries, over the maximum 25", len(d.Entries))
		}
	}
	textAt := -1
	for i, s := range seqs {
		if s == textSeq {
			textAt = i
		}
	}
	if textAt <= 0 || textAt == len(seqs)-1 {
		t.Errorf("text at delivery %d of %d: want it between coalesced runs", textAt, len(seqs))
	}
}

// TestWebhooks_CoalescedRetryAndDeadLetters: a coalesced delivery is
// retried with the same body and Rshub-Seq; when retries run out, every
// record of the run gets a dead letter and can be redriven.
func TestWebhooks_CoalescedRetryAndDeadLetters(t *testing.T) {
	t.Parallel()
	for _, giveUp := range []bool{false, true} {
		t.Run(fmt.Sprintf("giveUp=%v", giveUp), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			const topic, name = "https://example.org/src", "src"
			e.channel(topic, name)
			src := newRSSource(2, 10)
			var seqs []uint64
			for range 30 {
				seqs = append(seqs, src.publish(e, topic, name, 2))
			}
			r := newReceiver(t, func(n int, _ delivery) int {
				if giveUp || n <= 2 {
					return http.StatusServiceUnavailable
				}
				return http.StatusOK
			})
			sub := e.subscribe(topic, r.url("/cb"), "s3cret")
			cfg := e.fastConfig()
			cfg.Schedule.Attempts = 3
			cfg.Coalesce = CoalesceConfig{Threshold: 10}
			w, _ := e.start(cfg)
			last := seqs[len(seqs)-1]
			testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == last }, "cursor at the run's end")
			got := r.all()
			if len(got) != 3 {
				t.Fatalf("%d requests, want 3", len(got))
			}
			for _, d := range got {
				if d.Body != got[0].Body || d.Header.Get(wire.HeaderSeq) != strconv.FormatUint(last, 10) {
					t.Errorf("attempt with Rshub-Seq %s differs from the first", d.Header.Get(wire.HeaderSeq))
				}
			}
			dls := e.deadLetters(sub.ID)
			if !giveUp {
				if len(dls) != 0 {
					t.Errorf("%d dead letters, want none", len(dls))
				}
				return
			}
			if len(dls) != len(seqs) {
				t.Fatalf("%d dead letters, want one per record of the run (%d)", len(dls), len(seqs))
			}
			for i, d := range dls {
				if d.Seq != seqs[i] || d.Attempts != 3 {
					t.Errorf("dead letter %d: seq %d attempts %d, want seq %d attempts 3", i, d.Seq, d.Attempts, seqs[i])
				}
			}
			r.setRespond(nil)
			if err := w.Redrive(e.ctx(), sub.ID, dls[0].ID); err != nil {
				t.Fatalf("redrive: %v", err)
			}
			if n := len(e.deadLetters(sub.ID)); n != len(seqs)-1 {
				t.Errorf("%d dead letters after a redrive, want %d", n, len(seqs)-1)
			}
		})
	}
}

// TestCoalesceLog_Runs: a run stops before other content and before the
// entry limit; Next says where to go on.
func TestCoalesceLog_Runs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const topic, name = "https://example.org/src", "src"
	e.channel(topic, name)
	src := newRSSource(3, 1000)
	first := src.publish(e, topic, name, 4)
	for range 9 {
		src.publish(e, topic, name, 4)
	}
	text := e.appendBody(topic, name, 100000, "text/plain", []byte("x"))
	after := src.publish(e, topic, name, 4)

	run, err := logcache.CoalesceLog(e.ctx(), e.log, name, first, logcache.CoalesceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Records != 10 || run.First != first || run.Next != text || run.End {
		t.Fatalf("run %d records from %d, next %d end %v; want 10 from %d, next %d", run.Records, run.First, run.Next, run.End, first, text)
	}
	if err := changefeed.Validate(run.Doc, changefeed.Options{}); err != nil {
		t.Fatal(err)
	}
	run, err = logcache.CoalesceLog(e.ctx(), e.log, name, text, logcache.CoalesceOptions{})
	if err != nil || run.Records != 0 || run.Next != text {
		t.Fatalf("from the text: %d records, next %d, err %v; want 0, %d", run.Records, run.Next, err, text)
	}
	run, err = logcache.CoalesceLog(e.ctx(), e.log, name, after, logcache.CoalesceOptions{})
	if err != nil || run.Records != 1 || !run.End || run.Last != after {
		t.Fatalf("last run: %d records to %d, end %v, err %v", run.Records, run.Last, run.End, err)
	}
	run, err = logcache.CoalesceLog(e.ctx(), e.log, name, first, logcache.CoalesceOptions{MaxEntries: 10})
	if err != nil || run.Records != 2 || len(run.Doc.Entries) > 10 {
		t.Fatalf("limited run: %d records, %d entries, err %v; want 2 records", run.Records, len(run.Doc.Entries), err)
	}
}
