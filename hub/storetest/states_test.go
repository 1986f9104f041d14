package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// statesReader is a store that reads the delivery states of many
// subscriptions at once, as a delivery engine starting their queues asks.
type statesReader interface {
	DeliveryStates(ctx context.Context, ids []string) (cursors map[string]hub.Cursor, mayHaveDead map[string]bool, err error)
}

// stateTests are the contract of the bulk read of delivery states.
var stateTests = []struct {
	name string
	fn   func(*testing.T, hub.Store)
}{
	{"DeliveryStates_CursorsAndDeadLettersOfManyAtOnce", testDeliveryStates},
}

// testDeliveryStates stores cursors for every third of 700 subscriptions
// (more than one read's worth) and dead letters for every seventh, then
// reads them all back at once with IDs that have nothing and one that
// names no subscription: each stored cursor comes back exactly, no other;
// every subscription with a dead letter may have some, and one that never
// had any does not.
func testDeliveryStates(t *testing.T, s hub.Store) {
	sr, ok := s.(statesReader)
	if !ok {
		t.Skip("the store has no bulk read of delivery states")
	}
	ctx := ctxT(t)
	const n = 700
	ids := make([]string, 0, n+1)
	cursors := map[string]hub.Cursor{}
	dead := map[string]bool{}
	for i := range n {
		id := hub.SubscriptionID(Topics[i%len(Topics)], fmt.Sprintf("https://cb.example/%d", i))
		ids = append(ids, id)
		if i%3 == 0 {
			c := hub.Cursor{Seq: uint64(i + 1), Until: t0.Add(time.Duration(i) * time.Second)}
			check(t, s.PutCursor(ctx, id, c))
			cursors[id] = c
		}
		if i%7 == 0 {
			check(t, s.AddDeadLetter(ctx, hub.DeadLetter{ID: "d", SubID: id, Seq: 1, Failed: t0}))
			dead[id] = true
		}
	}
	ids = append(ids, hub.SubscriptionID(Topics[0], "https://nobody.example/"))
	got, mayDead, err := sr.DeliveryStates(ctx, ids)
	check(t, err)
	if len(got) != len(cursors) {
		t.Errorf("DeliveryStates read %d cursors, want %d", len(got), len(cursors))
	}
	for id, c := range cursors {
		same(t, "cursor of "+id, got[id], c)
	}
	for _, id := range ids {
		if dead[id] && !mayDead[id] {
			t.Errorf("%s has a dead letter, DeliveryStates says it has none", id)
		}
		if !dead[id] && mayDead[id] {
			t.Errorf("%s never had a dead letter, DeliveryStates says it may", id)
		}
	}
}
