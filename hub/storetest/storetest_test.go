// Package storetest is the contract every hub.Store implementation passes.
// It runs against both stores (stores_test.go); Run takes a function that opens a fresh,
// empty store.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Topics are URIs used as keys; they include characters that are special
// in NATS subjects, Redis patterns and URLs.
var Topics = []string{
	"https://example.org/changelist.xml",
	"https://example.org/a b/c?x=1&y=*#frag",
	"https://例え.jp/データ/変更.xml?q=ü",
	"http://example.org:8080/path.with.dots/>/*/",
	"urn:x-rshub:plain",
}

// Run runs the contract suite, each test on a store returned by open. A
// store either keeps every string of HostileKeys exactly or refuses it
// with a short error, and keeps answering Ping either way.
func Run(t *testing.T, open func(t *testing.T) hub.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, hub.Store)
	}{
		{"Channel_MissingIsNotFound", testChannelMissing},
		{"Channel_PutGetOverwriteDelete", testChannelRoundTrip},
		{"Channels_OrderedByTopic", testChannelsOrdered},
		{"ChannelState_MissingIsNotFound", testStateMissing},
		{"UpdateChannelState_StartsFromZeroWithTopic", testStateZero},
		{"UpdateChannelState_ErrorAborts", testStateAbort},
		{"UpdateChannelState_ConcurrentWritersAreAtomic", testStateConcurrent},
		{"Subscription_MissingIsNotFound", testSubMissing},
		{"Subscriptions_ByTopicOrderedByID", testSubsByTopic},
		{"DeleteSubscription_RemovesCursorAndDeadLetters", testSubDelete},
		{"Cursor_MissingIsNotFoundThenLatestWins", testCursor},
		{"DeadLetters_OrderedBySeq", testDeadOrdered},
		{"DeleteDeadLetter_MissingIsNotFound", testDeadDelete},
		{"Claim_TakesFreeRenewsAndRefusesOthers", testClaim},
		{"Claim_ExpiredLeaseGoesToAnotherOwner", testClaimExpiry},
		{"Release_OnlyByOwner", testRelease},
		{"Ping", testPing},
		{"Lists_EmptyAreNonNil", testEmptyListsAreNonNil},
		{"HostileKeys_Channels", testHostileChannels},
		{"HostileKeys_ChannelStates", testHostileStates},
		{"HostileKeys_SubscriptionsCursorsDeadLetters", testHostileSubscriptions},
		{"HostileKeys_Leases", testHostileLeases},
	}
	tests = append(tests, shardTests...)
	tests = append(tests, followTests...)
	tests = append(tests, attemptTests...)
	tests = append(tests, bulkTests...)
	tests = append(tests, cursorTests...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// ctxT bounds one contract test: a guard against a store that hangs, not a
// speed figure. The longest test (listing every shard 20 times while a
// writer rewrites every subscription) took 31 s under -race at a load
// average of 24 with 4 test binaries at once, so the guard is well beyond it.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var t0 = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)

// same fails unless got and want encode to the same JSON (times compared
// as instants with offset, monotonic readings ignored).
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func notFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("%s: err = %v, want one matching hub.ErrNotFound", what, err)
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func channel(topic string, i int) hub.Channel {
	return hub.Channel{Topic: topic, Name: fmt.Sprintf("ch%d", i), Trust: hub.TrustToken, Token: "tok",
		CapabilityList: topic + "/" + wire.CapabilityListFile, Hosted: i%2 == 0, Created: t0.Add(time.Duration(i) * time.Second)}
}

func subscription(topic, callback string) hub.Subscription {
	return hub.Subscription{ID: hub.SubscriptionID(topic, callback), Topic: topic, Callback: callback,
		Secret: "s3cret", Lease: 3600, Expires: t0.Add(time.Hour), State: hub.SubActive,
		Created: t0, Verified: t0.Add(time.Second), StartSeq: 42}
}

func testChannelMissing(t *testing.T, s hub.Store) {
	_, err := s.Channel(ctxT(t), Topics[0])
	notFound(t, "Channel", err)
	chs, err := s.Channels(ctxT(t))
	check(t, err)
	if len(chs) != 0 {
		t.Fatalf("empty store lists %d channels", len(chs))
	}
}

func testChannelRoundTrip(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for i, topic := range Topics {
		check(t, s.PutChannel(ctx, channel(topic, i)))
	}
	for i, topic := range Topics {
		got, err := s.Channel(ctx, topic)
		check(t, err)
		same(t, "Channel "+topic, got, channel(topic, i))
	}
	changed := channel(Topics[1], 1)
	changed.Trust = hub.TrustOpen
	changed.Token = ""
	check(t, s.PutChannel(ctx, changed))
	got, err := s.Channel(ctx, Topics[1])
	check(t, err)
	same(t, "overwritten channel", got, changed)

	check(t, s.DeleteChannel(ctx, Topics[1]))
	_, err = s.Channel(ctx, Topics[1])
	notFound(t, "deleted channel", err)
	if _, err := s.Channel(ctx, Topics[2]); err != nil {
		t.Fatalf("deleting one channel removed another: %v", err)
	}
}

func testChannelsOrdered(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	order := []int{3, 0, 4, 2, 1}
	for _, i := range order {
		check(t, s.PutChannel(ctx, channel(Topics[i], i)))
	}
	chs, err := s.Channels(ctx)
	check(t, err)
	if len(chs) != len(Topics) {
		t.Fatalf("Channels returned %d, want %d", len(chs), len(Topics))
	}
	for i := 1; i < len(chs); i++ {
		if chs[i-1].Topic >= chs[i].Topic {
			t.Fatalf("Channels not ordered by topic: %q before %q", chs[i-1].Topic, chs[i].Topic)
		}
	}
}

func testStateMissing(t *testing.T, s hub.Store) {
	_, err := s.ChannelState(ctxT(t), Topics[0])
	notFound(t, "ChannelState", err)
}

func testStateZero(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for _, topic := range Topics {
		st, err := s.UpdateChannelState(ctx, topic, func(st *hub.ChannelState) error {
			if st.Topic != topic || st.LastSeq != 0 || st.Published != 0 {
				return fmt.Errorf("initial state %+v, want zero with topic %q", st, topic)
			}
			st.LastSeq = 7
			st.LastFrom, st.LastUntil = t0, t0.Add(time.Minute)
			st.LastHash = "h"
			st.Published = 1
			st.Gaps = []hub.Gap{{From: t0.Add(-time.Hour), Until: t0, Seq: 7, Recorded: t0}}
			return nil
		})
		check(t, err)
		got, err := s.ChannelState(ctx, topic)
		check(t, err)
		same(t, "stored state", got, st)
		same(t, "returned state", st, hub.ChannelState{Topic: topic, LastSeq: 7, LastFrom: t0,
			LastUntil: t0.Add(time.Minute), LastHash: "h", Published: 1,
			Gaps: []hub.Gap{{From: t0.Add(-time.Hour), Until: t0, Seq: 7, Recorded: t0}}})
	}
}

func testStateAbort(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	topic := Topics[1]
	_, err := s.UpdateChannelState(ctx, topic, func(st *hub.ChannelState) error { st.Published = 1; return nil })
	check(t, err)
	boom := errors.New("boom")
	_, err = s.UpdateChannelState(ctx, topic, func(st *hub.ChannelState) error { st.Published = 99; return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want fn's error", err)
	}
	st, err := s.ChannelState(ctx, topic)
	check(t, err)
	if st.Published != 1 {
		t.Fatalf("aborted update was stored: Published = %d", st.Published)
	}
	_, err = s.UpdateChannelState(ctx, Topics[2], func(*hub.ChannelState) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want fn's error", err)
	}
	_, err = s.ChannelState(ctx, Topics[2])
	notFound(t, "state after an aborted first update", err)
}

func testStateConcurrent(t *testing.T, s hub.Store) {
	const writers, increments = 8, 50
	ctx := ctxT(t)
	topic := Topics[2]
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for range increments {
				if _, err := s.UpdateChannelState(ctx, topic, func(st *hub.ChannelState) error {
					st.Published++
					st.LastSeq = st.Published
					return nil
				}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st, err := s.ChannelState(ctx, topic)
	check(t, err)
	if st.Published != writers*increments || st.LastSeq != st.Published {
		t.Fatalf("after %d×%d increments: Published %d LastSeq %d", writers, increments, st.Published, st.LastSeq)
	}
}

func testSubMissing(t *testing.T, s hub.Store) {
	_, err := s.Subscription(ctxT(t), hub.SubscriptionID(Topics[0], "https://cb.example/"))
	notFound(t, "Subscription", err)
	subs, err := s.Subscriptions(ctxT(t), "")
	check(t, err)
	if len(subs) != 0 {
		t.Fatalf("empty store lists %d subscriptions", len(subs))
	}
}

func testSubsByTopic(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	want := map[string][]hub.Subscription{}
	for _, topic := range Topics[:3] {
		for i := range 4 {
			sub := subscription(topic, fmt.Sprintf("https://cb.example/hook?n=%d&t=%s", i, topic))
			check(t, s.PutSubscription(ctx, sub))
			want[topic] = append(want[topic], sub)
		}
	}
	one := want[Topics[1]][2]
	got, err := s.Subscription(ctx, one.ID)
	check(t, err)
	same(t, "Subscription", got, one)

	one.State = hub.SubExpired
	one.Rate, one.OperatorRate = 2.5, 0.25 // deliveries per second, kept
	check(t, s.PutSubscription(ctx, one))
	got, err = s.Subscription(ctx, one.ID)
	check(t, err)
	same(t, "overwritten subscription", got, one)

	total := 0
	for topic, subs := range want {
		list, err := s.Subscriptions(ctx, topic)
		check(t, err)
		if len(list) != len(subs) {
			t.Fatalf("Subscriptions(%q) = %d, want %d", topic, len(list), len(subs))
		}
		for i, sub := range list {
			if sub.Topic != topic {
				t.Fatalf("Subscriptions(%q) includes topic %q", topic, sub.Topic)
			}
			if i > 0 && list[i-1].ID >= sub.ID {
				t.Fatalf("Subscriptions(%q) not ordered by ID", topic)
			}
		}
		total += len(subs)
	}
	all, err := s.Subscriptions(ctx, "")
	check(t, err)
	if len(all) != total {
		t.Fatalf("Subscriptions(\"\") = %d, want %d", len(all), total)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID >= all[i].ID {
			t.Fatal("Subscriptions(\"\") not ordered by ID")
		}
	}
	none, err := s.Subscriptions(ctx, Topics[4])
	check(t, err)
	if len(none) != 0 {
		t.Fatalf("topic without subscriptions lists %d", len(none))
	}
}

func testSubDelete(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	gone := subscription(Topics[1], "https://cb.example/gone")
	kept := subscription(Topics[1], "https://cb.example/kept")
	for _, sub := range []hub.Subscription{gone, kept} {
		check(t, s.PutSubscription(ctx, sub))
		check(t, s.PutCursor(ctx, sub.ID, hub.Cursor{Seq: 5, Until: t0}))
		check(t, s.AddDeadLetter(ctx, hub.DeadLetter{ID: "d1", SubID: sub.ID, Seq: 3, Attempts: 5, Failed: t0}))
	}
	check(t, s.DeleteSubscription(ctx, gone.ID))
	_, err := s.Subscription(ctx, gone.ID)
	notFound(t, "deleted subscription", err)
	_, err = s.Cursor(ctx, gone.ID)
	notFound(t, "cursor of deleted subscription", err)
	dl, err := s.DeadLetters(ctx, gone.ID)
	check(t, err)
	if len(dl) != 0 {
		t.Fatalf("deleted subscription keeps %d dead letters", len(dl))
	}
	list, err := s.Subscriptions(ctx, Topics[1])
	check(t, err)
	if len(list) != 1 || list[0].ID != kept.ID {
		t.Fatalf("Subscriptions after delete = %+v, want only %s", list, kept.ID)
	}
	if _, err := s.Cursor(ctx, kept.ID); err != nil {
		t.Fatalf("other subscription's cursor: %v", err)
	}
	if dl, err := s.DeadLetters(ctx, kept.ID); err != nil || len(dl) != 1 {
		t.Fatalf("other subscription's dead letters = %d, %v", len(dl), err)
	}
}

func testCursor(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	id := hub.SubscriptionID(Topics[2], "https://cb.example/")
	_, err := s.Cursor(ctx, id)
	notFound(t, "Cursor", err)
	for i := range 3 {
		c := hub.Cursor{Seq: uint64(10 * (i + 1)), Until: t0.Add(time.Duration(i) * time.Minute)}
		check(t, s.PutCursor(ctx, id, c))
		got, err := s.Cursor(ctx, id)
		check(t, err)
		same(t, "Cursor", got, c)
	}
}

func testDeadOrdered(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	sub := hub.SubscriptionID(Topics[0], "https://cb.example/")
	other := hub.SubscriptionID(Topics[0], "https://other.example/")
	empty, err := s.DeadLetters(ctx, sub)
	check(t, err)
	if len(empty) != 0 {
		t.Fatalf("no dead letters yet, listed %d", len(empty))
	}
	var want []hub.DeadLetter
	for _, seq := range []uint64{50, 3, 1 << 40, 7, 12} {
		d := hub.DeadLetter{ID: fmt.Sprintf("dl-%d", seq), SubID: sub, Seq: seq, Attempts: 8,
			LastStatus: 503, Reason: "Service Unavailable", Failed: t0}
		check(t, s.AddDeadLetter(ctx, d))
		want = append(want, d)
	}
	check(t, s.AddDeadLetter(ctx, hub.DeadLetter{ID: "x", SubID: other, Seq: 1, Failed: t0}))
	got, err := s.DeadLetters(ctx, sub)
	check(t, err)
	if len(got) != len(want) {
		t.Fatalf("DeadLetters = %d, want %d", len(got), len(want))
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].Seq >= got[i].Seq {
			t.Fatalf("DeadLetters not ordered by Seq: %d before %d", got[i-1].Seq, got[i].Seq)
		}
	}
	for _, g := range got {
		for _, w := range want {
			if w.ID == g.ID {
				same(t, "dead letter "+g.ID, g, w)
			}
		}
	}
}

func testDeadDelete(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	sub := hub.SubscriptionID(Topics[3], "https://cb.example/")
	notFound(t, "DeleteDeadLetter of nothing", s.DeleteDeadLetter(ctx, sub, "nope"))
	for i := range 3 {
		check(t, s.AddDeadLetter(ctx, hub.DeadLetter{ID: fmt.Sprintf("d%d", i), SubID: sub, Seq: uint64(i + 1), Failed: t0}))
	}
	check(t, s.DeleteDeadLetter(ctx, sub, "d1"))
	notFound(t, "second DeleteDeadLetter", s.DeleteDeadLetter(ctx, sub, "d1"))
	got, err := s.DeadLetters(ctx, sub)
	check(t, err)
	if len(got) != 2 || got[0].ID != "d0" || got[1].ID != "d2" {
		t.Fatalf("after delete: %+v, want d0 and d2", got)
	}
}

func claim(t *testing.T, s hub.Store, key, owner string, ttl time.Duration) bool {
	t.Helper()
	ok, err := s.Claim(ctxT(t), key, owner, ttl)
	check(t, err)
	return ok
}

func testClaim(t *testing.T, s hub.Store) {
	for _, key := range Topics {
		if !claim(t, s, key, "hub-a", time.Minute) {
			t.Fatalf("free lease %q refused", key)
		}
		if !claim(t, s, key, "hub-a", time.Minute) {
			t.Fatalf("owner could not renew %q", key)
		}
		if claim(t, s, key, "hub-b", time.Minute) {
			t.Fatalf("unexpired lease %q given to another owner", key)
		}
	}
}

func testClaimExpiry(t *testing.T, s hub.Store) {
	key := "delivery/" + Topics[1]
	const ttl = 200 * time.Millisecond
	if !claim(t, s, key, "hub-a", ttl) {
		t.Fatal("free lease refused")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !claim(t, s, key, "hub-b", ttl) {
		if time.Now().After(deadline) {
			t.Fatal("expired lease never went to another owner")
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
	if claim(t, s, key, "hub-a", time.Minute) && claim(t, s, key, "hub-b", time.Minute) {
		t.Fatal("both owners hold the lease")
	}
}

func testRelease(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	key := Topics[2]
	if !claim(t, s, key, "hub-a", time.Minute) {
		t.Fatal("free lease refused")
	}
	check(t, s.Release(ctx, key, "hub-b"))
	if claim(t, s, key, "hub-b", time.Minute) {
		t.Fatal("release by a non-owner freed the lease")
	}
	check(t, s.Release(ctx, key, "hub-a"))
	if !claim(t, s, key, "hub-b", time.Minute) {
		t.Fatal("lease released by its owner not free")
	}
	check(t, s.Release(ctx, "never-claimed", "hub-a"))
}

func testPing(t *testing.T, s hub.Store) {
	check(t, s.Ping(ctxT(t)))
}
