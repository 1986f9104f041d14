package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

var cursorTests = []struct {
	name string
	fn   func(*testing.T, hub.Store)
}{
	{"PutCursors_StoresEveryOneLatestWins", testPutCursors},
	{"PutCursors_HostileKeysStoredOrRefusedAlone", testPutCursorsHostile},
}

// More cursors than either store sends unacknowledged at once, twice:
// every one is stored, and the second round's replace the first's.
func testPutCursors(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	const n = 700
	for round := range 2 {
		batch := map[string]hub.Cursor{}
		for i := range n {
			id := hub.SubscriptionID(Topics[i%len(Topics)], fmt.Sprintf("https://cb.example/%d", i))
			batch[id] = hub.Cursor{Seq: uint64(round*n + i + 1), Until: t0.Add(time.Duration(round) * time.Minute)}
		}
		if failed := s.PutCursors(ctx, batch); len(failed) != 0 {
			t.Fatalf("round %d: %d cursors not stored, e.g. %v", round, len(failed), first(failed))
		}
		for id, want := range batch {
			got, err := s.Cursor(ctx, id)
			check(t, err)
			same(t, fmt.Sprintf("round %d: Cursor(%s)", round, label(id)), got, want)
		}
	}
	if failed := s.PutCursors(ctx, nil); len(failed) != 0 {
		t.Fatalf("no cursors: %d failed", len(failed))
	}
}

// Each hostile subscription ID is stored exactly or refused with a short
// error of its own, and a refused one does not keep the others of its
// batch from being stored.
func testPutCursorsHostile(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	batch := map[string]hub.Cursor{}
	for i, key := range append([]string{""}, HostileKeys...) {
		batch[key] = hub.Cursor{Seq: uint64(i + 1), Until: t0}
	}
	good := hub.SubscriptionID(Topics[0], "https://cb.example/")
	batch[good] = hub.Cursor{Seq: 99, Until: t0}
	failed := s.PutCursors(ctx, batch)
	for id, want := range batch {
		if err := failed[id]; err != nil {
			refused(t, "PutCursors", id, err)
			_, err := s.Cursor(ctx, id)
			absent(t, "Cursor", id, err)
			continue
		}
		got, err := s.Cursor(ctx, id)
		check(t, err)
		same(t, "Cursor "+label(id), got, want)
	}
	if failed[good] != nil {
		t.Fatalf("a plain ID was refused beside hostile ones: %v", failed[good])
	}
	if failed[""] == nil {
		t.Fatal("an empty subscription ID was stored")
	}
	alive(t, s, "PutCursors", "")
}

func first(m map[string]error) error {
	for _, err := range m {
		return err
	}
	return nil
}
