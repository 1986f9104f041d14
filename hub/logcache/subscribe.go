package logcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/wire"
)

// DefaultBatch is the most records one Subscription.Next returns when
// Options.Batch is zero.
const DefaultBatch = 256

// Options configure a Subscription. Zero fields take the defaults.
type Options struct {
	// Channel is the channel followed; "" follows every channel.
	Channel string
	// Poll is how often the subscription reads the log without a change
	// signal, its safety net for a lost one; default DefaultPoll.
	Poll time.Duration
	// Batch is the most records one Next returns; default DefaultBatch.
	Batch int
	// Name names the subscriber in its health's operations and their log
	// lines ("websocket", "webhook wake-ups").
	Name string
	// Health receives the subscription's failing log reads; default a
	// Tracker of its own that logs to slog.Default(). A subscriber that
	// reports its own health passes its Tracker.
	Health *loophealth.Tracker
}

// Subscription follows a log's records of one channel, or of all, in
// sequence order from a resumable position: each Next returns the records
// after the position and moves it past them. It waits on the log's change
// signal and every Options.Poll, retries a failing log with backoff and
// reports it to its health, so a subscriber writes no loop of its own. A
// Subscription is used by one goroutine at a time.
type Subscription struct {
	log      hub.Log
	opt      Options
	h        *loophealth.Tracker
	poll     *time.Ticker // collected with the subscription (no Stop needed)
	pos      uint64
	failed   bool // a read failed since the last batch
	buf      []wire.Record
	opFollow string
	opStart  string
}

// Batch is what one Subscription.Next returns.
type Batch struct {
	// Records are the records after the position, in sequence order; they
	// are valid until the next call of Next, and their Body is shared and
	// must not be modified. A sequence may skip records removed by
	// retention or of other channels.
	Records []wire.Record
	// Resumed is set on the first batch after the log failed: the
	// subscriber may have missed appends its other readers made meanwhile.
	// It may come with no records.
	Resumed bool
}

// Subscribe returns a subscription to log's records after sequence after.
// log is normally a *Cache, whose followers then read from memory; any
// hub.Log works.
func Subscribe(log hub.Log, after uint64, opt Options) *Subscription {
	if opt.Poll <= 0 {
		opt.Poll = DefaultPoll
	}
	if opt.Batch <= 0 {
		opt.Batch = DefaultBatch
	}
	h := opt.Health
	if h == nil {
		h = loophealth.New(slog.Default())
	}
	return &Subscription{
		log: log, opt: opt, h: h, pos: after, poll: time.NewTicker(opt.Poll),
		opFollow: opt.Name + ": following the log",
		opStart:  opt.Name + ": finding the log's last sequence",
	}
}

// Position returns the sequence of the last record Next returned (or the
// position the subscription started at or was moved to).
func (s *Subscription) Position() uint64 { return s.pos }

// Health reports whether the subscription reads the log: false when its
// reads have been failing since since, with the latest error. It does no
// I/O.
func (s *Subscription) Health() (ok bool, since time.Time, err error) { return s.h.State() }

// SeekEnd moves the position to the log's last sequence once the log's
// readers see it (a cache in front of the log may lag the log's Bounds),
// so that every later append is one Next returns and every record up to
// the position is visible to a reader that goes by it. A failing log is
// retried with backoff. It reports false when ctx ends first.
func (s *Subscription) SeekEnd(ctx context.Context) bool {
	last := uint64(0)
	ok := s.await(ctx, s.opStart, func() (bool, error) {
		var err error
		if _, last, err = s.log.Bounds(ctx); err != nil {
			return false, err
		}
		return Visible(ctx, s.log, last)
	})
	if ok {
		s.pos, s.failed = last, false
	}
	return ok
}

// Next waits until the log holds records after the position and returns
// them, at most Options.Batch, moving the position past them. It returns
// at once with Resumed and no records when the log works again after
// failing. It reports false when ctx ends first.
func (s *Subscription) Next(ctx context.Context) (Batch, bool) {
	ok := s.await(ctx, s.opFollow, func() (bool, error) {
		if err := s.read(ctx); err != nil && len(s.buf) == 0 {
			return false, err
		}
		return len(s.buf) > 0 || s.failed, nil
	})
	if !ok {
		return Batch{}, false
	}
	b := Batch{Records: s.buf, Resumed: s.failed}
	s.failed = false
	return b, true
}

// read fills buf with the records after the position, moving it. Records
// read before a failure are kept; the failure shows on the next read.
func (s *Subscription) read(ctx context.Context) error {
	s.buf = s.buf[:0]
	for len(s.buf) < s.opt.Batch {
		rec, err := s.log.Next(ctx, s.opt.Channel, s.pos+1)
		if errors.Is(err, hub.ErrNotFound) {
			return nil
		}
		if err == nil && rec.Seq <= s.pos {
			err = fmt.Errorf("log returned %d", rec.Seq)
		}
		if err != nil {
			return fmt.Errorf("logcache: %s from %d: %w", s.opt.Name, s.pos+1, err)
		}
		s.buf = append(s.buf, rec)
		s.pos = rec.Seq
	}
	return nil
}

// await is Await for the subscription, polling every Options.Poll:
// ready's errors are failures of op, reported to the health and retried
// with backoff. It reports false when ctx ends first.
func (s *Subscription) await(ctx context.Context, op string, ready func() (bool, error)) bool {
	for {
		_, err := Await(ctx, s.log, 0, s.poll.C, func(bool) (bool, error) {
			done, err := ready()
			return done, s.h.Report(ctx, op, err)
		})
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			return true
		}
		s.failed = true
		if !s.h.Backoff(ctx, op, loophealth.EngineRetry) {
			return false
		}
	}
}

// Visible reports whether log's readers see the record seq or a later one
// (Next finds it): false while a cache in front of the log has not
// absorbed it yet.
func Visible(ctx context.Context, log hub.Log, seq uint64) (bool, error) {
	if seq == 0 {
		return true, nil
	}
	_, err := log.Next(ctx, "", seq)
	if errors.Is(err, hub.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Await waits for a condition on log: it calls ready, then again after
// every append log signals, and after every value of tick with ticked set,
// until ready reports true (Await then reports true) or fails (Await
// returns its error), within has passed (0: no bound; Await reports false)
// or ctx ends (Await returns ctx's error). It takes the change signal
// before each call of ready, so no append goes unseen.
func Await(ctx context.Context, log hub.Log, within time.Duration, tick <-chan time.Time, ready func(ticked bool) (bool, error)) (bool, error) {
	var bound <-chan time.Time
	if within > 0 {
		t := time.NewTimer(within)
		defer t.Stop()
		bound = t.C
	}
	ticked := false
	for {
		changed := log.Changed() // taken before reading: no lost signal
		if ok, err := ready(ticked); ok || err != nil {
			return ok, err
		}
		ticked = false
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-bound:
			return false, nil
		case <-changed:
		case <-tick:
			ticked = true
		}
	}
}
