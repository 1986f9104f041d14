package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// HostileKeys are strings a client may send where a store uses a key:
// topics, subscription and dead letter IDs, lease keys. They are made to
// break protocols that carry keys as tokens: NATS subjects (".", "*",
// ">", spaces, a 4 KiB control line), Redis and HTTP framing (CR, LF),
// C strings (NUL), JSON (invalid UTF-8), from 1 byte up to 64 KiB.
var HostileKeys = []string{
	"a",
	"\x00",
	"nul\x00inside",
	" ",
	" leading and trailing ",
	"a.b.c",
	".",
	"..",
	"*",
	">",
	"a.*.>",
	"%",
	"%00%2F%zz",
	"\r\n",
	"line\r\nbreak",
	"PUB evil 0\r\n\r\n-ERR x\r\n",
	"tab\there\vand\fform\x7f",
	"\xff\xfe",   // invalid UTF-8
	"ok\xc3(end", // invalid UTF-8
	"https://例え.jp/データ/😀?q=ü#frag",
	"\u202eRTL\u200d\ufeff",
	strings.Repeat("x", 3000), // issue 11: past the NATS control line as a base64 key
	"https://example.org/" + strings.Repeat("a.b*>/", 1000),
	strings.Repeat("é", 32<<10),                 // 64 KiB of two-byte runes
	strings.Repeat("\x00\r\n.*> %", (64<<10)/9), // 64 KiB of everything at once
}

// maxErrLen bounds an error message: an error names a key, it does not
// repeat 64 KiB of it.
const maxErrLen = 4 << 10

// refused checks that err, from an operation on key, is a clear refusal.
func refused(t *testing.T, op, key string, err error) {
	t.Helper()
	if msg := err.Error(); msg == "" || len(msg) > maxErrLen {
		t.Fatalf("%s(%s): error of %d bytes, want a short clear one", op, label(key), len(msg))
	}
	if errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("%s(%s): a refused write reports ErrNotFound: %v", op, label(key), err)
	}
}

// absent checks that a read of a key whose write was refused finds
// nothing (not found or refused).
func absent(t *testing.T, op, key string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s(%s) succeeded after its write was refused", op, label(key))
	}
}

// alive fails unless the store still answers: an operation did not kill
// its connection.
func alive(t *testing.T, s hub.Store, after, key string) {
	t.Helper()
	if err := s.Ping(ctxT(t)); err != nil {
		t.Fatalf("after %s(%s) the store no longer answers Ping: %v", after, label(key), err)
	}
}

// label describes a key briefly in a failure message.
func label(key string) string {
	if len(key) > 40 {
		return fmt.Sprintf("%q…(%d bytes)", key[:40], len(key))
	}
	return fmt.Sprintf("%q", key)
}

func testHostileChannels(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for i, key := range HostileKeys {
		ch := channel(key, i)
		if err := s.PutChannel(ctx, ch); err != nil {
			refused(t, "PutChannel", key, err)
			alive(t, s, "PutChannel", key)
			_, err := s.Channel(ctx, key)
			absent(t, "Channel", key, err)
			continue
		}
		alive(t, s, "PutChannel", key)
		got, err := s.Channel(ctx, key)
		check(t, err)
		if got.Topic != key {
			t.Fatalf("Channel(%s) topic = %s", label(key), label(got.Topic))
		}
		same(t, "Channel "+label(key), got, ch)
		all, err := s.Channels(ctx)
		check(t, err)
		if !slices.ContainsFunc(all, func(c hub.Channel) bool { return c.Topic == key }) {
			t.Fatalf("Channels lacks %s", label(key))
		}
		check(t, s.DeleteChannel(ctx, key))
		_, err = s.Channel(ctx, key)
		notFound(t, "deleted channel "+label(key), err)
		alive(t, s, "DeleteChannel", key)
	}
}

func testHostileStates(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for i, key := range HostileKeys {
		_, err := s.UpdateChannelState(ctx, key, func(st *hub.ChannelState) error {
			st.LastSeq = uint64(i + 1)
			return nil
		})
		alive(t, s, "UpdateChannelState", key)
		if err != nil {
			refused(t, "UpdateChannelState", key, err)
			_, err := s.ChannelState(ctx, key)
			absent(t, "ChannelState", key, err)
			continue
		}
		st, err := s.ChannelState(ctx, key)
		check(t, err)
		if st.Topic != key || st.LastSeq != uint64(i+1) {
			t.Fatalf("ChannelState(%s) = topic %s, LastSeq %d", label(key), label(st.Topic), st.LastSeq)
		}
	}
}

func testHostileSubscriptions(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for i, key := range HostileKeys {
		sub := subscription(key, "https://cb.example/"+fmt.Sprint(i))
		sub.ID = key
		if err := s.PutSubscription(ctx, sub); err != nil {
			refused(t, "PutSubscription", key, err)
			alive(t, s, "PutSubscription", key)
			_, err := s.Subscription(ctx, key)
			absent(t, "Subscription", key, err)
			continue
		}
		alive(t, s, "PutSubscription", key)
		got, err := s.Subscription(ctx, key)
		check(t, err)
		if got.ID != key || got.Topic != key {
			t.Fatalf("Subscription(%s) = ID %s topic %s", label(key), label(got.ID), label(got.Topic))
		}
		same(t, "Subscription "+label(key), got, sub)
		list, err := s.Subscriptions(ctx, key)
		check(t, err)
		if len(list) != 1 || list[0].ID != key {
			t.Fatalf("Subscriptions(%s) = %d subscriptions", label(key), len(list))
		}

		c := hub.Cursor{Seq: uint64(i + 1), Until: t0}
		check(t, s.PutCursor(ctx, key, c))
		gotC, err := s.Cursor(ctx, key)
		check(t, err)
		same(t, "Cursor "+label(key), gotC, c)

		d := hub.DeadLetter{ID: key, SubID: key, Seq: uint64(i + 1), Reason: key, Failed: t0}
		check(t, s.AddDeadLetter(ctx, d))
		dl, err := s.DeadLetters(ctx, key)
		check(t, err)
		if len(dl) != 1 || dl[0].ID != key || dl[0].SubID != key {
			t.Fatalf("DeadLetters(%s) = %d", label(key), len(dl))
		}
		check(t, s.DeleteDeadLetter(ctx, key, key))
		notFound(t, "second DeleteDeadLetter "+label(key), s.DeleteDeadLetter(ctx, key, key))
		check(t, s.AddDeadLetter(ctx, d))
		check(t, s.AddAttempts(ctx, []hub.Attempt{{SubID: key, Seq: uint64(i + 1), Error: key, Time: t0}}))
		if as, err := s.Attempts(ctx, key); err != nil || len(as) != 1 || as[0].SubID != key {
			t.Fatalf("Attempts(%s) = %d attempts (%v)", label(key), len(as), err)
		}

		check(t, s.DeleteSubscription(ctx, key))
		_, err = s.Subscription(ctx, key)
		notFound(t, "deleted subscription "+label(key), err)
		_, err = s.Cursor(ctx, key)
		notFound(t, "cursor of deleted subscription "+label(key), err)
		if dl, err := s.DeadLetters(ctx, key); err != nil || len(dl) != 0 {
			t.Fatalf("deleted subscription %s keeps %d dead letters (%v)", label(key), len(dl), err)
		}
		if as, err := s.Attempts(ctx, key); err != nil || len(as) != 0 {
			t.Fatalf("deleted subscription %s keeps %d attempts (%v)", label(key), len(as), err)
		}
		alive(t, s, "DeleteSubscription", key)
	}
}

func testHostileLeases(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for _, key := range HostileKeys {
		ok, err := s.Claim(ctx, key, "hub-a", time.Minute)
		alive(t, s, "Claim", key)
		if err != nil {
			refused(t, "Claim", key, err)
			continue
		}
		if !ok {
			t.Fatalf("free lease %s refused", label(key))
		}
		if claim(t, s, key, "hub-b", time.Minute) {
			t.Fatalf("lease %s given to a second owner", label(key))
		}
		check(t, s.Release(ctx, key, "hub-a"))
		if !claim(t, s, key, "hub-b", time.Minute) {
			t.Fatalf("released lease %s not free", label(key))
		}
		alive(t, s, "Release", key)
	}
}

func testEmptyListsAreNonNil(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	chs, err := s.Channels(ctx)
	check(t, err)
	if chs == nil || len(chs) != 0 {
		t.Fatalf("Channels of an empty store = %#v, want an empty non-nil slice", chs)
	}
	for _, topic := range []string{"", Topics[0]} {
		subs, err := s.Subscriptions(ctx, topic)
		check(t, err)
		if subs == nil || len(subs) != 0 {
			t.Fatalf("Subscriptions(%q) of an empty store = %#v, want an empty non-nil slice", topic, subs)
		}
	}
	dl, err := s.DeadLetters(ctx, hub.SubscriptionID(Topics[0], "https://cb.example/"))
	check(t, err)
	if dl == nil || len(dl) != 0 {
		t.Fatalf("DeadLetters of an empty store = %#v, want an empty non-nil slice", dl)
	}
}
