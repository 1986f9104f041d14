package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// countingStore counts the follow status writes.
type countingStore struct {
	*kvstore.Store
	puts atomic.Int64
}

func (s *countingStore) PutFollowStatus(ctx context.Context, topic string, b []byte) error {
	s.puts.Add(1)
	return s.Store.PutFollowStatus(ctx, topic, b)
}

// The follower's status lives in the store: an engine that does not follow
// the channel itself (another hub) answers the same as the owner's; the
// owner writes it at most once every statusEvery however often it polls;
// once the owner's claim has expired the status says so; it goes when the
// channel is no longer followed.
func TestEngine_StatusLivesInTheStore(t *testing.T) {
	r := newRig(t)
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/cl.xml", "changelist"}))
	r.src.set("/cl.xml", cl(t0, "", "a@"+t1))
	_, nc := testenv.NATS(t)
	ctx := context.Background()
	kv, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: kv}
	ch := hub.Channel{Topic: "https://example.org/a b?c=*>", Name: "c", Follow: r.srv.URL + "/cap.xml", PollInterval: "10ms", Validation: hub.ValidationStrict}
	if err := kv.PutChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	owner, err := New(Config{Hub: r.hub, Store: st, Client: r.srv.Client(), Owner: "hub-a", Reconcile: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	clock := &testenv.Clock{}
	other, err := New(Config{Hub: r.hub, Store: kv, Client: r.srv.Client(), Owner: "hub-b", Now: clock.Now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- owner.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	polled := func() (n uint64) { // the owner's own count, not the stored one
		owner.mu.Lock()
		defer owner.mu.Unlock()
		for _, r := range owner.followers {
			n += r.f.status().Polls
		}
		return n
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return polled() >= 150 }, "150 polls")
	elapsed := time.Since(start)
	if puts, most := st.puts.Load(), int64(elapsed/statusEvery)+2; puts > most {
		t.Errorf("%d status writes in %s of %d polls: want at most %d (one every %s)", puts, elapsed, polled(), most, statusEvery)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		s, err := other.Status(ctx, ch)
		return err == nil && s.Owner == "hub-a" && s.Polls > 0 && r.hub.published() == "a"
	}, "another hub reads the owner's status")

	fromOwner, err := owner.Statuses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fromOther, err := other.Statuses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromOwner)
	b, _ := json.Marshal(fromOther)
	if len(fromOther) != 1 || fromOther[0].Channel != "c" || fromOther[0].Expired ||
		fromOther[0].Updated.IsZero() || fromOther[0].ClaimExpires.Before(fromOther[0].Updated) {
		t.Fatalf("statuses read by another hub: %s", b)
	}
	// the owner may have written once more between the two reads
	if fromOwner[0].Updated.Equal(fromOther[0].Updated) && string(a) != string(b) {
		t.Errorf("two hubs answer differently:\n%s\n%s", a, b)
	}

	clock.Advance(time.Hour) // past the owner's claim
	if s, err := other.Status(ctx, ch); err != nil || !s.Expired || s.Owner != "hub-a" {
		t.Errorf("status once the owner's claim expired: %+v, %v; want expired, owner hub-a", s, err)
	}

	ch.Follow = ""
	if err := kv.PutChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		_, err := kv.FollowStatus(ctx, ch.Topic)
		return errors.Is(err, hub.ErrNotFound)
	}, "the status of a channel no longer followed goes")
	if all, err := other.Statuses(ctx); err != nil || len(all) != 0 {
		t.Errorf("statuses after the channel is no longer followed: %v, %v", all, err)
	}
}

// A status stored for another Source (the channel's changed since) is not
// shown as the channel's.
func TestEngine_StatusOfAnotherSourceIsNotShown(t *testing.T) {
	r := newRig(t)
	ch := hub.Channel{Topic: "t", Name: "c", Follow: "http://s.example/new", PollInterval: "1m"}
	old, _ := json.Marshal(Status{Channel: "c", Source: "http://s.example/old", Polls: 9, Owner: "hub-a"})
	s := r.e.statusOf(ch, old)
	if s.Polls != 0 || s.Owner != "" || s.Source != ch.Follow || s.Leniencies == nil {
		t.Fatalf("status of the old Source shown: %+v", s)
	}
}

// A stored status stays bounded whatever the Source serves: leniency
// rules, messages, plan URLs.
func TestStatus_StoredIsBounded(t *testing.T) {
	var st Status
	long := strings.Repeat("x", 100_000)
	for i := range 3 * maxLeniencies {
		st.addLeniencies([]hub.Leniency{{Rule: fmt.Sprint("rule-", i, long), Msg: long}}, time.Now())
	}
	st.Plan = Plan{ChangeList: long, Index: long, Archive: long, CapabilityList: long, ResourceList: long}
	for range 1000 {
		st.Plan.Others = append(st.Plan.Others, long)
	}
	st.LastError = clip(long)
	b, err := json.Marshal(st.bounded())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Leniencies) != maxLeniencies || len(b) > hub.MaxFollowStatusLen/2 {
		t.Fatalf("%d leniency rules, %d bytes stored: want %d rules and well within %d bytes", len(st.Leniencies), len(b), maxLeniencies, hub.MaxFollowStatusLen)
	}
	if err := hub.CheckFollowStatus(b); err != nil {
		t.Fatal(err)
	}
}
