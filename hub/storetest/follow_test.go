package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
)

// followTests are the contract of the follower statuses.
var followTests = []struct {
	name string
	fn   func(*testing.T, hub.Store)
}{
	{"FollowStatus_PutGetListOverwriteDelete", testFollowStatus},
	{"FollowStatus_DeletedWithTheChannel", testFollowStatusDeletedWithChannel},
	{"FollowStatus_RefusesTooLongOrNotJSON", testFollowStatusRefused},
	{"HostileKeys_FollowStatuses", testHostileFollowStatuses},
}

func followStatus(topic string, polls int) []byte {
	b, _ := json.Marshal(map[string]any{"topic": topic, "polls": polls})
	return b
}

// sameJSON fails unless got and want are the same JSON (a store may drop
// insignificant white space).
func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w bytes.Buffer
	if err := json.Compact(&g, got); err != nil {
		t.Fatalf("%s: not JSON: %v (%q)", what, err, got)
	}
	check(t, json.Compact(&w, want))
	if g.String() != w.String() {
		t.Fatalf("%s = %s, want %s", what, g.String(), w.String())
	}
}

func testFollowStatus(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	_, err := s.FollowStatus(ctx, Topics[0])
	notFound(t, "FollowStatus", err)
	all, err := s.FollowStatuses(ctx)
	check(t, err)
	if all == nil || len(all) != 0 {
		t.Fatalf("FollowStatuses of an empty store = %#v, want an empty non-nil map", all)
	}
	for i, topic := range Topics {
		check(t, s.PutFollowStatus(ctx, topic, followStatus(topic, i)))
	}
	check(t, s.PutFollowStatus(ctx, Topics[1], followStatus(Topics[1], 100)))
	all, err = s.FollowStatuses(ctx)
	check(t, err)
	if len(all) != len(Topics) {
		t.Fatalf("FollowStatuses lists %d, want %d", len(all), len(Topics))
	}
	for i, topic := range Topics {
		want := followStatus(topic, i)
		if i == 1 {
			want = followStatus(topic, 100)
		}
		got, err := s.FollowStatus(ctx, topic)
		check(t, err)
		sameJSON(t, "FollowStatus "+topic, got, want)
		sameJSON(t, "FollowStatuses["+topic+"]", all[topic], want)
	}
	check(t, s.DeleteFollowStatus(ctx, Topics[1]))
	check(t, s.DeleteFollowStatus(ctx, Topics[1])) // absent: no error
	_, err = s.FollowStatus(ctx, Topics[1])
	notFound(t, "deleted follow status", err)
	if _, err := s.FollowStatus(ctx, Topics[2]); err != nil {
		t.Fatalf("deleting one follow status removed another: %v", err)
	}
}

func testFollowStatusDeletedWithChannel(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for i, topic := range Topics[:2] {
		check(t, s.PutChannel(ctx, channel(topic, i)))
		check(t, s.PutFollowStatus(ctx, topic, followStatus(topic, i)))
	}
	check(t, s.DeleteChannel(ctx, Topics[0]))
	_, err := s.FollowStatus(ctx, Topics[0])
	notFound(t, "follow status of a deleted channel", err)
	all, err := s.FollowStatuses(ctx)
	check(t, err)
	if _, ok := all[Topics[0]]; ok || len(all) != 1 {
		t.Fatalf("FollowStatuses after the channel's delete: %d statuses, the deleted one listed: %v", len(all), ok)
	}
}

func testFollowStatusRefused(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	long := []byte(`"` + strings.Repeat("x", hub.MaxFollowStatusLen) + `"`)
	for _, bad := range [][]byte{long, []byte("not json"), nil, []byte(`{"a":`)} {
		err := s.PutFollowStatus(ctx, Topics[0], bad)
		if err == nil {
			t.Fatalf("PutFollowStatus of %d bytes %q… stored", len(bad), bad[:min(len(bad), 10)])
		}
		refused(t, "PutFollowStatus", Topics[0], err)
		_, err = s.FollowStatus(ctx, Topics[0])
		notFound(t, "a refused follow status", err)
	}
	atLimit := []byte(`"` + strings.Repeat("x", hub.MaxFollowStatusLen-2) + `"`)
	check(t, s.PutFollowStatus(ctx, Topics[0], atLimit))
}

func testHostileFollowStatuses(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for i, key := range HostileKeys {
		st := followStatus(fmt.Sprint("hostile ", i), i)
		if err := s.PutFollowStatus(ctx, key, st); err != nil {
			refused(t, "PutFollowStatus", key, err)
			alive(t, s, "PutFollowStatus", key)
			_, err := s.FollowStatus(ctx, key)
			absent(t, "FollowStatus", key, err)
			continue
		}
		alive(t, s, "PutFollowStatus", key)
		got, err := s.FollowStatus(ctx, key)
		check(t, err)
		sameJSON(t, "FollowStatus "+label(key), got, st)
		all, err := s.FollowStatuses(ctx)
		check(t, err)
		sameJSON(t, "FollowStatuses["+label(key)+"]", all[key], st)
		check(t, s.DeleteFollowStatus(ctx, key))
		_, err = s.FollowStatus(ctx, key)
		notFound(t, "deleted follow status "+label(key), err)
		alive(t, s, "DeleteFollowStatus", key)
	}
}
