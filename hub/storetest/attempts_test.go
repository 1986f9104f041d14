package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

var attemptTests = []struct {
	name string
	fn   func(*testing.T, hub.Store)
}{
	{"Attempts_MissingIsEmpty", testAttemptsMissing},
	{"Attempts_NewestFirstBoundedPerSubscription", testAttemptsBounded},
	{"Attempts_EveryFieldBounded", testAttemptsClipped},
	{"DeleteSubscription_RemovesAttemptLog", testAttemptsDeleted},
	{"AddAttempts_ManySubscriptionsOneBatch", testAttemptsManySubs},
}

// attempt is the attempt i of subscription sub, a failure with a response.
func attempt(sub string, i int) hub.Attempt {
	return hub.Attempt{SubID: sub, Time: t0.Add(time.Duration(i) * time.Second), Seq: uint64(100 + i), Attempt: i%3 + 1,
		Status: 500 + i%4, LatencyMS: 12.5, Headers: map[string]string{"Content-Type": "text/plain", "Retry-After": "30"},
		Body: fmt.Sprintf("broken %d", i), Error: "callback answered 500 Internal Server Error", NextRetry: t0.Add(time.Minute)}
}

func testAttemptsMissing(t *testing.T, s hub.Store) {
	as, err := s.Attempts(ctxT(t), hub.SubscriptionID(Topics[0], "https://cb.example/"))
	check(t, err)
	if as == nil || len(as) != 0 {
		t.Fatalf("Attempts of an empty store = %#v, want an empty non-nil slice", as)
	}
	check(t, s.AddAttempts(ctxT(t), nil))
}

func testAttemptsBounded(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	a, b := hub.SubscriptionID(Topics[0], "https://a.example/"), hub.SubscriptionID(Topics[1], "https://b.example/")
	total := hub.AttemptLogLen + 7
	var wantA []hub.Attempt // oldest first
	for start := 0; start < total; start += 20 {
		var batch []hub.Attempt
		for i := start; i < min(start+20, total); i++ {
			batch = append(batch, attempt(a, i))
			wantA = append(wantA, attempt(a, i))
			if i%5 == 0 {
				batch = append(batch, attempt(b, i))
			}
		}
		check(t, s.AddAttempts(ctx, batch))
	}
	got, err := s.Attempts(ctx, a)
	check(t, err)
	if len(got) != hub.AttemptLogLen {
		t.Fatalf("log holds %d attempts after %d, want the newest %d", len(got), total, hub.AttemptLogLen)
	}
	for i, g := range got {
		same(t, fmt.Sprintf("attempt %d, newest first", i), g, wantA[total-1-i])
	}
	gotB, err := s.Attempts(ctx, b)
	check(t, err)
	if n := (total + 4) / 5; len(gotB) != n || gotB[0].Seq != attempt(b, 55).Seq || gotB[n-1].Seq != attempt(b, 0).Seq {
		t.Fatalf("the other subscription's log holds %d attempts (%v), want its %d newest first", len(gotB), gotB, n)
	}
	// many batches of one (a quiet subscription's): the newest across them
	c := hub.SubscriptionID(Topics[2], "https://c.example/")
	for i := range hub.AttemptLogLen + 10 {
		check(t, s.AddAttempts(ctx, []hub.Attempt{attempt(c, i)}))
	}
	gotC, err := s.Attempts(ctx, c)
	check(t, err)
	if len(gotC) != hub.AttemptLogLen {
		t.Fatalf("log holds %d attempts after %d batches of one, want %d", len(gotC), hub.AttemptLogLen+10, hub.AttemptLogLen)
	}
	for i, g := range gotC {
		same(t, fmt.Sprintf("batches of one: attempt %d, newest first", i), g, attempt(c, hub.AttemptLogLen+9-i))
	}
	// one batch that fills the log by itself (a busy subscription's), and
	// one exactly as long: each replaces the log with its newest
	for _, n := range []int{hub.AttemptLogLen + 3, hub.AttemptLogLen} {
		var batch []hub.Attempt
		for i := range n {
			batch = append(batch, attempt(a, 1000*n+i))
		}
		check(t, s.AddAttempts(ctx, batch))
		got, err := s.Attempts(ctx, a)
		check(t, err)
		if len(got) != hub.AttemptLogLen {
			t.Fatalf("log holds %d attempts after a batch of %d, want %d", len(got), n, hub.AttemptLogLen)
		}
		for i, g := range got {
			same(t, fmt.Sprintf("batch of %d: attempt %d, newest first", n, i), g, batch[n-1-i])
		}
	}
}

func testAttemptsClipped(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	sub := hub.SubscriptionID(Topics[2], "https://c.example/")
	a := attempt(sub, 1)
	a.Body = strings.Repeat("é", hub.AttemptBodyLen) + "\xff"
	a.Error = strings.Repeat("\xffx", 10<<10)
	a.Headers = map[string]string{"retry-after": strings.Repeat("9", 100<<10), "Set-Cookie": "secret=1", "X-Evil\r\n": "x"}
	a.Status = 1 << 20
	check(t, s.AddAttempts(ctx, []hub.Attempt{a}))
	got, err := s.Attempts(ctx, sub)
	check(t, err)
	if len(got) != 1 {
		t.Fatalf("log holds %d attempts, want 1", len(got))
	}
	g := got[0]
	same(t, "clipped attempt", g, hub.ClipAttempt(a))
	if len(g.Body) > hub.AttemptBodyLen || len(g.Error) > 1024 || len(g.Headers) != 1 || len(g.Headers["Retry-After"]) > 1024 || g.Status != 0 {
		t.Fatalf("attempt kept beyond its bounds: body %d, error %d bytes, headers %q, status %d", len(g.Body), len(g.Error), g.Headers, g.Status)
	}
	if same := hub.ClipAttempt(g); same.Body != g.Body || same.Error != g.Error || same.Headers["Retry-After"] != g.Headers["Retry-After"] {
		t.Fatal("ClipAttempt is not idempotent")
	}
}

func testAttemptsDeleted(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	sub := subscription(Topics[0], "https://d.example/hook")
	other := subscription(Topics[0], "https://e.example/hook")
	check(t, s.PutSubscription(ctx, sub))
	check(t, s.PutSubscription(ctx, other))
	check(t, s.AddAttempts(ctx, []hub.Attempt{attempt(sub.ID, 1), attempt(other.ID, 1), attempt(sub.ID, 2)}))
	check(t, s.DeleteSubscription(ctx, sub.ID))
	if as, err := s.Attempts(ctx, sub.ID); err != nil || len(as) != 0 {
		t.Fatalf("deleted subscription keeps %d attempts (%v)", len(as), err)
	}
	if as, err := s.Attempts(ctx, other.ID); err != nil || len(as) != 1 {
		t.Fatalf("deleting one subscription left the other %d attempts (%v), want 1", len(as), err)
	}
}

// One batch of many subscriptions' attempts (more than either store sends
// unacknowledged at once) reaches every log; an empty ID in a batch is
// refused with a short error, and the rest of its batch kept.
func testAttemptsManySubs(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	const n = 600
	var batch []hub.Attempt
	ids := make([]string, n)
	for i := range ids {
		ids[i] = hub.SubscriptionID(Topics[i%len(Topics)], fmt.Sprintf("https://cb.example/%d", i))
		batch = append(batch, attempt(ids[i], 1))
	}
	for i := range ids {
		batch = append(batch, attempt(ids[i], 2))
	}
	check(t, s.AddAttempts(ctx, batch))
	// A bad ID in a batch is refused alone: the others' attempts are kept.
	if err := s.AddAttempts(ctx, []hub.Attempt{attempt(ids[0], 3), attempt("", 1), attempt(ids[1], 3)}); err == nil {
		t.Fatal("AddAttempts took an attempt of an empty subscription ID")
	} else {
		refused(t, "AddAttempts", "", err)
	}
	for i, id := range ids {
		got, err := s.Attempts(ctx, id)
		check(t, err)
		want := []uint64{attempt(id, 2).Seq, attempt(id, 1).Seq}
		if i < 2 {
			want = append([]uint64{attempt(id, 3).Seq}, want...)
		}
		if len(got) != len(want) {
			t.Fatalf("Attempts(%s) = %v, want %d, newest first", label(id), got, len(want))
		}
		for k := range want {
			if got[k].Seq != want[k] {
				t.Fatalf("Attempts(%s) = %v, want seqs %v", label(id), got, want)
			}
		}
	}
}
