package kvstore

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/internal/testenv"
)

// A paged scan reads every live entry of a bucket once, with its latest
// value (none when asked for keys only), over more pages than one and
// without the deleted ones; it reads nothing of an empty bucket, and
// gives what a watch gives.
func TestScanPaged_EveryLiveEntryOnce(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "paged", History: 1})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := openBucketStream(ctx, js, kv)
	if err != nil || bs.stream == nil {
		t.Fatalf("bucket stream: %v, %v", bs.stream, err)
	}
	read := func(bs bucketStream, keysOnly bool) map[string]string {
		t.Helper()
		got := map[string]string{}
		err := scanPaged(ctx, kv, bs, keysOnly, func(k string, v []byte, _ uint64) error {
			if _, dup := got[k]; dup {
				t.Errorf("key %s read twice", k)
			}
			got[k] = string(v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(bs, false); len(got) != 0 {
		t.Fatalf("empty bucket: read %d entries", len(got))
	}
	const n = 3*scanPageSize + 100
	want := map[string]string{}
	for i := range n {
		k, v := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		if _, err := kv.Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	for i := 0; i < n; i += 10 {
		k := fmt.Sprintf("k%d", i)
		if i%20 == 0 {
			err = kv.Delete(ctx, k)
			delete(want, k)
		} else {
			_, err = kv.Put(ctx, k, []byte("again"))
			want[k] = "again"
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := read(bs, false); !maps.Equal(got, want) {
		t.Errorf("read %d entries, want %d (or values differ)", len(got), len(want))
	}
	keys := read(bs, true)
	if len(keys) != len(want) {
		t.Errorf("keys only: read %d keys, want %d", len(keys), len(want))
	}
	for k, v := range keys {
		if _, ok := want[k]; !ok || v != "" {
			t.Errorf("keys only: %s = %q", k, v)
		}
	}
	if got := read(bucketStream{}, false); !maps.Equal(got, want) {
		t.Errorf("watch without the stream: read %d entries, want %d", len(got), len(want))
	}
}
