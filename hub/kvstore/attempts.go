package kvstore

import (
	"context"
	"errors"
	"fmt"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// attemptLog is the value of a subscription's key in the attempts bucket.
type attemptLog struct {
	SubID    string        `json:"subscription"`
	Attempts []hub.Attempt `json:"attempts"` // newest first
}

// AddAttempts appends each attempt to its subscription's log: one more
// revision of the log's key per subscription of as, written as batched
// puts (batchput.go). The attempts of each subscription are taken in
// their order in as; when they lie together (as an AttemptLog's flush
// hands them over), without grouping them first.
func (s *Store) AddAttempts(ctx context.Context, as []hub.Attempt) error {
	runs, ok := subRuns(as)
	if !ok { // a subscription's attempts are apart: group them
		bySub := map[string][]hub.Attempt{}
		var order []string
		for _, a := range as {
			if _, seen := bySub[a.SubID]; !seen {
				order = append(order, a.SubID)
			}
			bySub[a.SubID] = append(bySub[a.SubID], a)
		}
		as, runs = as[:0:0], runs[:0]
		for _, id := range order {
			runs = append(runs, len(as))
			as = append(as, bySub[id]...)
		}
	}
	var errs []error
	fail := func(id string, err error) {
		errs = append(errs, fmt.Errorf("kvstore: add attempts of %q: %w", wire.Clip(id), err))
	}
	puts, ids := make([]batchPut, 0, len(runs)), make([]string, 0, len(runs))
	var scratch []hub.Attempt
	for i, from := range runs {
		to := len(as)
		if i+1 < len(runs) {
			to = runs[i+1]
		}
		id := as[from].SubID
		var p batchPut
		var err error
		p, scratch, err = attemptPut(id, as[from:to], scratch)
		if err != nil {
			fail(id, err)
			continue
		}
		puts, ids = append(puts, p), append(ids, id)
	}
	s.putBatch(ctx, func(b *buckets) jetstream.KeyValue { return b.attempts }, puts, func(i int, err error) { fail(ids[i], err) })
	return errors.Join(errs...)
}

// subRuns returns where each run of one subscription's attempts starts in
// as, and false when a subscription has more than one run.
func subRuns(as []hub.Attempt) ([]int, bool) {
	var runs []int
	seen := map[string]bool{}
	for i, a := range as {
		if i > 0 && a.SubID == as[i-1].SubID {
			continue
		}
		if seen[a.SubID] {
			return runs, false
		}
		seen[a.SubID] = true
		runs = append(runs, i)
	}
	return runs, true
}

// attemptRevisions is how many batches of a subscription's attempts its
// key keeps (the bucket's history, at most 64): at least one attempt each,
// so never fewer than hub.AttemptLogLen attempts.
const attemptRevisions = 64

// attemptPut is the put of as, oldest first, as one more revision of
// subID's key: a write, without reading the log back (a read, a decode and
// a compare-and-set each time cost as much CPU as the deliveries of a
// subscription getting a notification a second). Attempts reads the
// revisions back. The newest hub.AttemptLogLen of as, clipped, newest
// first, are laid out in scratch, which it returns for the next call.
func attemptPut(subID string, as, scratch []hub.Attempt) (batchPut, []hub.Attempt, error) {
	k, err := key("subscription ID", subID)
	if err != nil {
		return batchPut{}, scratch, err
	}
	scratch = scratch[:0]
	for i := len(as) - 1; i >= max(0, len(as)-hub.AttemptLogLen); i-- {
		scratch = append(scratch, hub.ClipAttempt(as[i]))
	}
	val, err := json.Marshal(attemptLog{SubID: subID, Attempts: scratch})
	return batchPut{k, val}, scratch, err
}

// Attempts returns the attempt log of subID, newest first: its newest
// hub.AttemptLogLen attempts over the revisions of its key, back to its
// last deletion.
func (s *Store) Attempts(ctx context.Context, subID string) ([]hub.Attempt, error) {
	k, err := key("subscription ID", subID)
	if err != nil {
		return nil, fmt.Errorf("kvstore: attempts of %q: %w", wire.Clip(subID), err)
	}
	out := []hub.Attempt{}
	err = s.do(ctx, func(ctx context.Context, b *buckets) error {
		out = out[:0]
		revs, err := b.attempts.History(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for i := len(revs) - 1; i >= 0 && len(out) < hub.AttemptLogLen; i-- {
			if revs[i].Operation() != jetstream.KeyValuePut {
				break // deleted: what came before is gone
			}
			var log attemptLog
			if err := json.Unmarshal(revs[i].Value(), &log); err != nil {
				return fmt.Errorf("decode %s: %w", k, err)
			}
			out = append(out, log.Attempts[:min(len(log.Attempts), hub.AttemptLogLen-len(out))]...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: attempts of %q: %w", wire.Clip(subID), err)
	}
	return out, nil
}
