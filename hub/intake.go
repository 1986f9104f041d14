package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// maxGaps bounds the gaps kept per channel; older ones are dropped.
const maxGaps = 100

// PublishError is a refused publish: the HTTP status, a short reason code
// for metrics and a message for the publisher.
type PublishError struct {
	Status int
	Code   string
	Msg    string
}

func (e *PublishError) Error() string { return e.Msg }

func refuse(status int, code, format string, args ...any) *PublishError {
	return &PublishError{Status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// PublishResult says what happened to an accepted publish.
type PublishResult struct {
	Seq       uint64
	Duplicate bool // the same notification was stored before; nothing new written
	Gap       *Gap // set when this notification left a gap after the previous one
	Unchanged bool // a thin ping whose topic content had not changed
}

// incoming is a notification about to be stored.
type incoming struct {
	ch           Channel
	body         []byte
	contentType  string
	from, until  time.Time
	resourcesync string
	rs           bool // a ResourceSync notification: continuity applies
	entries      int
}

// idempotencyKey identifies a notification by topic and exact bytes.
func idempotencyKey(topic string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(topic))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// commit checks continuity and stores one notification in the log, then
// advances the channel state. Intake on one channel is serialised.
func (h *Hub) commit(ctx context.Context, in incoming) (PublishResult, error) {
	start := h.cfg.Now()
	key := idempotencyKey(in.ch.Topic, in.body)
	lock := h.channelLock(in.ch.Topic)
	lock.Lock()
	defer lock.Unlock()

	st, err := h.syncedState(ctx, in.ch)
	if err != nil {
		return PublishResult{}, err
	}
	if st.LastHash == key {
		return PublishResult{Seq: st.LastSeq, Duplicate: true}, nil
	}
	var gap *Gap
	if in.rs {
		c := changefeed.CheckContinuity(st.LastUntil, in.from, in.until)
		switch c.Verdict {
		case changefeed.First, changefeed.Contiguous:
		case changefeed.Gap:
			gap = &Gap{From: c.Missing.From, Until: c.Missing.Until, Recorded: h.cfg.Now().UTC()}
		case changefeed.Overlap, changefeed.OutOfOrder:
			if !h.cfg.AllowOverlap {
				return PublishResult{}, refuse(409, "continuity",
					"%s: notification [%s, %s] %s the channel's last until %s",
					c.Verdict, fmtTime(in.from), fmtTime(in.until), verbFor(c.Verdict), fmtTime(st.LastUntil))
			}
		}
	}
	rec := Record{
		Topic:        in.ch.Topic,
		Channel:      in.ch.Name,
		From:         in.from,
		Until:        in.until,
		ContentType:  in.contentType,
		ResourceSync: in.resourcesync,
		Received:     h.cfg.Now().UTC(),
		Key:          key,
		Entries:      in.entries,
		Body:         in.body,
	}
	seq, dup, err := h.cfg.Log.Append(ctx, rec)
	if err != nil {
		return PublishResult{}, fmt.Errorf("append to log: %w", err)
	}
	if gap != nil {
		gap.Seq = seq
	}
	_, err = h.cfg.Store.UpdateChannelState(ctx, in.ch.Topic, func(s *ChannelState) error {
		if seq <= s.LastSeq {
			return nil
		}
		s.LastSeq = seq
		if in.rs && (in.until.After(s.LastUntil) || h.cfg.AllowOverlap) {
			s.LastFrom, s.LastUntil = in.from, in.until
		}
		s.LastHash = key
		s.Published++
		if gap != nil {
			s.Gaps = append(s.Gaps, *gap)
			if len(s.Gaps) > maxGaps {
				s.Gaps = s.Gaps[len(s.Gaps)-maxGaps:]
			}
		}
		return nil
	})
	if err != nil {
		// the log holds the notification: it is durable and will be
		// delivered; the state catches up from the log on the next sync
		h.forgetSync(in.ch.Topic)
		h.log.Error("channel state update failed after append", "topic", in.ch.Topic, "seq", seq, "err", err)
	}
	if gap != nil {
		h.obs.GapRecorded(in.ch.Name)
		h.log.Warn("gap in channel history", "channel", in.ch.Name, "from", gap.From, "until", gap.Until, "seq", seq)
	}
	h.obs.Published(in.ch.Name, len(in.body), h.cfg.Now().Sub(start))
	return PublishResult{Seq: seq, Duplicate: dup, Gap: gap}, nil
}

// syncedState returns the channel state, first bringing it up to date with
// the log once per process (a crash between append and state update leaves
// the state behind the log).
func (h *Hub) syncedState(ctx context.Context, ch Channel) (ChannelState, error) {
	st, err := h.cfg.Store.ChannelState(ctx, ch.Topic)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return st, fmt.Errorf("channel state: %w", err)
	}
	h.mu.Lock()
	done := h.synced[ch.Topic]
	h.mu.Unlock()
	if done {
		return st, nil
	}
	last, found := Record{}, false
	for seq := st.LastSeq + 1; ; {
		rec, err := h.cfg.Log.Next(ctx, ch.Name, seq)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return st, fmt.Errorf("sync channel state with log: %w", err)
		}
		last, found = rec, true
		seq = rec.Seq + 1
	}
	if found {
		st, err = h.cfg.Store.UpdateChannelState(ctx, ch.Topic, func(s *ChannelState) error {
			if last.Seq > s.LastSeq {
				s.LastSeq, s.LastHash = last.Seq, last.Key
				if !last.Until.IsZero() {
					s.LastFrom, s.LastUntil = last.From, last.Until
				}
			}
			return nil
		})
		if err != nil {
			return st, fmt.Errorf("sync channel state with log: %w", err)
		}
		h.log.Info("channel state caught up with the log", "channel", ch.Name, "seq", st.LastSeq)
	}
	h.mu.Lock()
	h.synced[ch.Topic] = true
	h.mu.Unlock()
	return st, nil
}

func (h *Hub) forgetSync(topic string) {
	h.mu.Lock()
	delete(h.synced, topic)
	h.mu.Unlock()
}

func verbFor(v changefeed.Verdict) string {
	if v == changefeed.Overlap {
		return "overlaps"
	}
	return "does not come after"
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "(none)"
	}
	return t.UTC().Format(time.RFC3339Nano)
}
