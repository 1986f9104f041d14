package logcache_test

import (
	"context"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// Range reads a channel's records in [from, to] in order, through the
// underlying log's range read (jslog) or record by record (a log without one).
func TestRange_ReadsAChannelsRunInOrder(t *testing.T) {
	_, nc := testenv.NATS(t)
	js, err := jslog.Open(context.Background(), nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.Close() })
	mem := newMemLog()
	cases := []struct {
		name string
		log  hub.Log
		ring int // 2: the run starts before the ring, so jslog's range read serves it
	}{{"jslog, in the ring", js, 0}, {"jslog, before the ring", js, 2}, {"without range", mem, 0}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := logcache.New(tc.log, logcache.Config{MaxRecords: tc.ring})
			start(t, c)
			seqs := appendAll(t, c, "a", "b", "a", "a", "b", "a") // a: 1st, 3rd, 4th, 6th
			var got []uint64
			err := c.Range(ctxT(t), "a", seqs[2], seqs[5], func(r wire.Record) error {
				got = append(got, r.Seq)
				return nil
			})
			want := []uint64{seqs[2], seqs[3], seqs[5]}
			if err != nil || len(got) != len(want) {
				t.Fatalf("Range = %v, %v; want %v", got, err, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("Range = %v; want %v", got, want)
				}
			}
		})
	}
}
