package delivery

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// owners returns, for each shard, the members whose targetShards claim it.
func owners(members []string) [hub.Shards][]string {
	var out [hub.Shards][]string
	for _, m := range members {
		for n, mine := range targetShards(members, m) {
			if mine {
				out[n] = append(out[n], m)
			}
		}
	}
	return out
}

func TestTargetShards_EveryShardHasOneOwner(t *testing.T) {
	t.Parallel()
	for size := 1; size <= 7; size++ {
		var members []string
		for i := range size {
			members = append(members, fmt.Sprintf("hub-%d-%x", i, i*7919))
		}
		count := map[string]int{}
		for n, os := range owners(members) {
			if len(os) != 1 {
				t.Fatalf("%d members: shard %d owned by %v, want exactly one", size, n, os)
			}
			count[os[0]]++
		}
		// Rendezvous hashing is random-like: with 64 shards no member of a
		// small cluster should hold less than a third or more than twice
		// its fair share.
		fair := float64(hub.Shards) / float64(size)
		for _, m := range members {
			if c := float64(count[m]); c < fair/3 || c > fair*2 {
				t.Errorf("%d members: %s holds %v shards, fair share %.1f", size, m, c, fair)
			}
		}
	}
}

func TestTargetShards_AJoiningHubTakesOnlyItsShare(t *testing.T) {
	t.Parallel()
	three := []string{"hub-a", "hub-b", "hub-c"}
	four := append(slices.Clone(three), "hub-d")
	before, after := owners(three), owners(four)
	moved := 0
	for n := range hub.Shards {
		if before[n][0] != after[n][0] {
			moved++
			if after[n][0] != "hub-d" {
				t.Errorf("shard %d moved from %s to %s, not to the joining hub", n, before[n][0], after[n][0])
			}
		}
	}
	if moved == 0 || moved > hub.Shards/2 {
		t.Errorf("%d shards moved to the joining hub, want about a quarter", moved)
	}
}

func TestTargetShards_OwnerAbsentFromMembersCountsItself(t *testing.T) {
	t.Parallel()
	got := targetShards(nil, "lonely")
	for n, mine := range got {
		if !mine {
			t.Fatalf("alone, the owner does not target shard %d", n)
		}
	}
}

// moveWait is the deadline of the conditions of the tests where shards
// move between hubs: three engines in one process deliver to 24
// callbacks under the race detector, on a machine that may be busy with
// other work; a loaded 2-core machine took 30 s for what takes 3 s idle.
const moveWait = 90 * time.Second

// shardedLoad is a set of subscriptions spread over many shards, each with
// its own callback path, and a publisher appending to their channel.
type shardedLoad struct {
	e    *env
	r    *receiver
	subs []hub.Subscription

	mu   sync.Mutex
	seqs []uint64
}

func newShardedLoad(t *testing.T, e *env, n int) *shardedLoad {
	e.channel(topic, "feed")
	l := &shardedLoad{e: e, r: newReceiver(t, nil)}
	shards := map[int]bool{}
	for i := range n {
		s := e.subscribe(topic, l.r.url("/cb/"+strconv.Itoa(i)), "")
		l.subs = append(l.subs, s)
		shards[hub.ShardOf(s.ID)] = true
	}
	if len(shards) < n/2 {
		t.Fatalf("%d subscriptions fall in only %d shards", n, len(shards))
	}
	return l
}

// publish appends n notifications.
func (l *shardedLoad) publish(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seqs = append(l.seqs, l.e.publish(topic, "feed", len(l.seqs), n)...)
}

// check waits until every callback has the last notification, then
// checks each got every notification in order, with at most dups repeats.
func (l *shardedLoad) check(t *testing.T, dups int) {
	t.Helper()
	l.mu.Lock()
	want := slices.Clone(l.seqs)
	l.mu.Unlock()
	byPath := func() map[string][]uint64 {
		out := map[string][]uint64{}
		for _, d := range l.r.all() {
			n, _ := strconv.ParseUint(d.Header.Get(wire.HeaderSeq), 10, 64)
			out[d.Path] = append(out[d.Path], n)
		}
		return out
	}
	last := want[len(want)-1]
	testenv.Eventually(t, moveWait, func() bool {
		got := byPath()
		for i := range l.subs {
			s := got["/cb/"+strconv.Itoa(i)]
			if len(s) == 0 || s[len(s)-1] != last {
				return false
			}
		}
		return true
	}, "every callback has the last notification")
	for path, got := range byPath() {
		checkInOrderOnce(t, path, got, want, dups)
	}
}

// split reports whether the engines' shards are disjoint, cover every
// shard, and each engine holds some.
func split(ws ...*Webhooks) bool {
	seen := map[int]bool{}
	for _, w := range ws {
		s := w.Shards()
		if len(s) == 0 {
			return false
		}
		for _, n := range s {
			if seen[n] {
				return false
			}
			seen[n] = true
		}
	}
	return len(seen) == hub.Shards
}

func TestWebhooks_HubsJoiningAndLeavingSplitTheShardsWithoutLossOrDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := newShardedLoad(t, e, 24)
	cfg := e.fastConfig()
	// Claims every second, each given a second: a busy machine's slow
	// claim does not make the shards flap between the hubs.
	cfg.ClaimTTL = 6 * time.Second
	a, stopA := e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return len(a.Shards()) == hub.Shards }, "the first hub holds every shard")
	l.publish(5)
	l.check(t, 0)

	b, _ := e.start(cfg)
	c, _ := e.start(cfg)
	// Notifications appended while the shards move are delivered once:
	// a shard leaves a hub only after its queues stored their cursors.
	deadline := time.Now().Add(moveWait)
	for !split(a, b, c) {
		if time.Now().After(deadline) {
			t.Fatalf("three hubs did not split the shards: %v, %v, %v", a.Shards(), b.Shards(), c.Shards())
		}
		l.publish(1)
		time.Sleep(100 * time.Millisecond) // pacing the load, not synchronisation
	}
	l.publish(5)
	l.check(t, 0)

	stopA() // leaves: its shards go to b and c at once, not after a lease
	testenv.Eventually(t, moveWait, func() bool { return split(b, c) }, "the remaining hubs hold every shard")
	l.publish(5)
	l.check(t, 0)
}

// leaseLog is a store that records the ownership rounds of the engine
// using it: when each round's heartbeat was sent, when a heartbeat or claim
// last renewed something, and since when each lease has been held (from
// the claim that took it to a claim refused or a release).
type leaseLog struct {
	*kvstore.Store
	mu        sync.Mutex
	rounds    []time.Time          // each heartbeat's sending
	renewed   time.Time            // last answer of a heartbeat or a claim held
	heldSince map[string]time.Time // lease key → the answer that took it
}

func newLeaseLog(s *kvstore.Store) *leaseLog {
	return &leaseLog{Store: s, heldSince: map[string]time.Time{}}
}

func (l *leaseLog) Heartbeat(ctx context.Context, owner string, ttl time.Duration) ([]string, error) {
	sent := time.Now()
	ms, err := l.Store.Heartbeat(ctx, owner, ttl)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rounds = append(l.rounds, sent)
	if err == nil {
		l.renewed = time.Now()
	}
	return ms, err
}

func (l *leaseLog) Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	ok, err := l.Store.Claim(ctx, key, owner, ttl)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch _, held := l.heldSince[key]; {
	case ok && !held:
		l.heldSince[key] = time.Now()
		l.renewed = time.Now()
	case ok:
		l.renewed = time.Now()
	case err == nil:
		delete(l.heldSince, key)
	}
	return ok, err
}

func (l *leaseLog) Release(ctx context.Context, key, owner string) error {
	err := l.Store.Release(ctx, key, owner)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		delete(l.heldSince, key)
	}
	return err
}

// lastRenewed is when a heartbeat or a claim last renewed something.
func (l *leaseLog) lastRenewed() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.renewed
}

// tookAll is when the last of the leases held now was taken.
func (l *leaseLog) tookAll() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var last time.Time
	for _, at := range l.heldSince {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// longestRound is the longest time between two rounds' heartbeats.
func (l *leaseLog) longestRound() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var longest time.Duration
	for i := 1; i < len(l.rounds); i++ {
		longest = max(longest, l.rounds[i].Sub(l.rounds[i-1]))
	}
	return longest
}

// A dead hub's shards move to the live one within the claim TTL of its
// last renewal, however late the live hub's rounds run: leases last 2/3
// TTL and lapse on time on a loaded machine too; the first round of the
// live hub's to start after the lapse starts within the longest time
// between two of its rounds, and its claims end before the next round.
// On time (a round every TTL/6) that is the TTL exactly.
func TestWebhooks_DeadHubsShardsMoveWithinTheClaimTTL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := newShardedLoad(t, e, 24)
	cfg := e.fastConfig()
	cfg.ClaimTTL = 4 * time.Second // claims every 667 ms, each given as long: none lapses for a busy machine
	o := &outage{}
	deadLog, liveLog := newLeaseLog(e.store), newLeaseLog(e.store)
	dead := NewWebhooks(e.log, &flakyStore{s: deadLog, o: o}, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- dead.Run(ctx) }()
	// Back in reach, the dead hub stops at once rather than retrying
	// to store its cursors for seconds; nothing is checked after.
	t.Cleanup(func() { o.Set(false); cancel(); <-ran })
	live, _ := e.startWith(liveLog, cfg)
	testenv.Eventually(t, wait, func() bool { return split(dead, live) }, "two hubs split the shards")
	l.publish(5)
	l.check(t, 0)

	// The dead hub can no longer reach the store, as after a crash or a
	// partition: it stops its queues and its leases lapse.
	o.Set(true)
	testenv.Eventually(t, wait, func() bool { return len(live.Shards()) == hub.Shards }, "the live hub took every shard")
	took, round := liveLog.tookAll().Sub(deadLog.lastRenewed()), liveLog.longestRound()
	bound := cfg.ClaimTTL*2/3 + 2*round
	t.Logf("takeover %v after the dead hub's last renewal; claim TTL %v, live rounds up to %v apart: bound %v", took, cfg.ClaimTTL, round, bound)
	if took > bound {
		t.Errorf("takeover %v after the dead hub's last renewal, want within %v: the claim TTL %v with the live hub's rounds up to %v apart", took, bound, cfg.ClaimTTL, round)
	}
	if n := len(dead.Shards()); n != 0 {
		t.Errorf("the cut-off hub still holds %d shards", n)
	}
	l.publish(5)
	// A cursor the dead hub could not store is delivered again from the
	// stored one: repeats are bounded by what it delivered unstored, at
	// most a CursorFlush interval's worth (cursor.go).
	l.check(t, 5)
}

// stallingClaims is a store whose claims answer only when their context
// ends, recording the deadline each was sent with.
type stallingClaims struct {
	Store
	mu        sync.Mutex
	deadlines []time.Time
}

func (s *stallingClaims) Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	d, _ := ctx.Deadline()
	s.mu.Lock()
	s.deadlines = append(s.deadlines, d)
	s.mu.Unlock()
	<-ctx.Done()
	return false, ctx.Err()
}

// A round of claims ends by one deadline, however many shards it claims
// and however slowly the store answers: claims waiting for a slot when it
// passes are not sent. With a deadline per claim, a store answering each
// just in time stretched a round of 64 shards over four renewal periods;
// the leases claimed first lapsed before the next round, no claim having
// failed, and another hub took shards this one still delivered (a
// duplicate in TestWebhooks_HubsJoiningAndLeavingSplitTheShardsWithoutLossOrDuplicates).
func TestWebhooks_ClaimRoundEndsByOneDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := &stallingClaims{Store: e.store}
	w := NewWebhooks(e.log, st, e.fastConfig())
	var all [hub.Shards]bool
	for n := range all {
		all[n] = true
	}
	w.claimShards(context.Background(), all, 50*time.Millisecond)
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.deadlines) == 0 || len(st.deadlines) > claimParallel {
		t.Fatalf("%d claims sent, want some and at most the %d a slot each allows before the deadline", len(st.deadlines), claimParallel)
	}
	for _, d := range st.deadlines {
		if d.IsZero() || !d.Equal(st.deadlines[0]) {
			t.Fatalf("claims sent with deadlines %v, want one for the round", st.deadlines)
		}
	}
	if n := len(w.Shards()); n != 0 {
		t.Errorf("%d shards held after a round whose claims all failed", n)
	}
}
