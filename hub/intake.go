package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// maxGaps bounds the gaps kept per channel; older ones are dropped.
const maxGaps = 100

// defaultMaxClockSkew is how far ahead of the hub's clock a notification's
// times may lie when Config.MaxClockSkew is zero.
const defaultMaxClockSkew = 5 * time.Minute

// appendTimeout bounds one append to the log: a log that does not answer
// makes the publish fail with 503 instead of holding it (and the channel).
const appendTimeout = 10 * time.Second

// retryAfter is the Retry-After, in seconds, of a 503 answered because the
// log or the store did not answer.
const retryAfter = 5

// unavailableError is a publish that failed because a dependency (the log
// or the store) did not answer: the publisher should retry later (503
// with Retry-After).
type unavailableError struct {
	what string // "the log", "the state store"
	err  error
}

func (e *unavailableError) Error() string { return e.what + " did not answer: " + e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// unavailable marks err as a failure of what (the log or the store),
// unless it is already a refusal or so marked.
func unavailable(what string, err error) error {
	var u *unavailableError
	var pe *PublishError
	if errors.As(err, &u) || errors.As(err, &pe) {
		return err
	}
	return &unavailableError{what: what, err: err}
}

// maxClockSkew is the configured clock skew allowance or its default.
func (h *Hub) maxClockSkew() time.Duration {
	if h.cfg.MaxClockSkew > 0 {
		return h.cfg.MaxClockSkew
	}
	return defaultMaxClockSkew
}

// checkNotFuture refuses with r a document with a from, until or
// change time further ahead of the hub's clock than the clock skew
// allowance.
func (h *Hub) checkNotFuture(doc *changefeed.Document, r Reason) error {
	skew := h.maxClockSkew()
	if err := changefeed.CheckNotAfter(doc, h.cfg.Now().Add(skew)); err != nil {
		return refuse(r, "%v (the hub accepts times at most %s ahead of its clock: its clock skew limit)", err, skew)
	}
	return nil
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
	// key is the idempotency key; "" is that of the topic and body.
	key string
	// once, for a notification the hub composed (PublishFramework): a
	// record of the channel after seq after with the same key is a
	// duplicate too, not only the channel's last one.
	once  bool
	after uint64
	// text, for a Mercure update that is no ResourceSync document: refused
	// at the commit when the channel's history holds a change
	// notification (its publish checked before; one may have landed since).
	text bool
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
// advances the channel state. Intake on one channel is serialised within the
// process; across processes the conditional append keeps it serial, and a
// continuity reset made through another hub is picked up (see freshState).
func (h *Hub) commit(ctx context.Context, in incoming) (res PublishResult, err error) {
	var traced wire.Record // the trace context of the caller's span, stored with the record
	traceRecord(ctx, &traced)
	ctx, span := h.startCommit(ctx) // trace.go
	defer func() { endSpan(span, err) }()
	start := h.cfg.Now()
	key := in.key
	if key == "" {
		key = idempotencyKey(in.ch.Topic, in.body)
	}
	unlock, err := h.lockChannel(ctx, commitKey(in.ch.Topic))
	if err != nil {
		return PublishResult{}, err
	}
	defer unlock()

	m, _, err := h.freshState(ctx, in.ch, false)
	if err != nil {
		return PublishResult{}, err
	}
	refreshed := false
	for attempt := 0; ; attempt++ {
		if m.st.LastHash == key {
			return PublishResult{Seq: m.st.LastSeq, Duplicate: true}, nil
		}
		if in.once {
			seq, err := h.keyAfter(ctx, in.ch.Name, key, in.after, m.st.LastSeq)
			if err != nil {
				return PublishResult{}, unavailable("the log", err)
			}
			if seq > 0 {
				return PublishResult{Seq: seq, Duplicate: true}, nil
			}
		}
		if in.text && !m.st.LastUntil.IsZero() {
			return PublishResult{}, textRefused(historyHoldsChangeNotifications)
		}
		var gap *Gap
		if in.rs {
			c := changefeed.CheckContinuity(m.st.LastUntil, in.from, in.until)
			switch c.Verdict {
			case changefeed.First, changefeed.Contiguous:
			case changefeed.Gap:
				gap = &Gap{From: c.Missing.From, Until: c.Missing.Until, Recorded: h.cfg.Now().UTC()}
			case changefeed.Overlap, changefeed.OutOfOrder:
				if h.cfg.AllowOverlap {
					break
				}
				if !refreshed {
					// an operator may have reset the anchor through another hub
					refreshed = true
					_, changed, err := h.freshState(ctx, in.ch, true)
					if err != nil {
						return PublishResult{}, err
					}
					if changed {
						continue
					}
				}
				return PublishResult{}, refuse(ReasonContinuity,
					"%s: notification [%s, %s] %s the channel's last until %s (an operator can inspect and reset it: GET and POST /admin/channels/%s/continuity)",
					c.Verdict, fmtTime(in.from), fmtTime(in.until), verbFor(c.Verdict), fmtTime(m.st.LastUntil), in.ch.Name)
			}
		}
		rec := wire.Record{
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
			TraceParent:  traced.TraceParent,
			TraceState:   traced.TraceState,
			Private:      in.ch.Private,
		}
		seq, dup, err := h.append(ctx, rec, m.st.LastSeq)
		if errors.Is(err, ErrConflict) && attempt < 5 {
			// another hub process appended to this channel (or reset its
			// anchor): catch up, recheck
			if _, _, err := h.freshState(ctx, in.ch, true); err != nil {
				return PublishResult{}, err
			}
			if err := h.catchUp(ctx, in.ch, m); err != nil {
				return PublishResult{}, unavailable("the log", err)
			}
			continue
		}
		if err != nil {
			return PublishResult{}, unavailable("the log", fmt.Errorf("append to log: %w", err))
		}
		rec.Seq = seq
		if gap != nil {
			gap.Seq = seq
			h.obs.GapRecorded(in.ch.Name)
			h.logger.Warn("gap in channel history", "channel", in.ch.Name, "from", gap.From, "until", gap.Until, "seq", seq)
		}
		advance(&m.st, rec, gap)
		h.markDirty(m)
		if !in.once { // the hub's own framework notifications are not a Source's publishes
			h.obs.Published(in.ch.Name, len(in.body), h.cfg.Now().Sub(start))
		}
		return PublishResult{Seq: seq, Duplicate: dup, Gap: gap}, nil
	}
}

// append stores rec, conditionally on the channel's last sequence when the
// log supports it.
func (h *Hub) append(ctx context.Context, rec wire.Record, lastSeq uint64) (uint64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, appendTimeout)
	defer cancel()
	if cl, ok := h.cfg.Log.(ConditionalLog); ok {
		return cl.AppendAfter(ctx, rec, lastSeq)
	}
	return h.cfg.Log.Append(ctx, rec)
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
