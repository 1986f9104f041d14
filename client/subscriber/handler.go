package subscriber

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// DefaultMaxBody bounds a delivery body: the ResourceSync document limit.
const DefaultMaxBody = 50 << 20

// Notification is one delivery, checked and parsed.
type Notification struct {
	Subscription Subscription // the subscription the callback URL belongs to
	// Topic and Hub are the delivery's Link rel="self" and rel="hub";
	// ResourceSync its rel="resourcesync" when present.
	Topic, Hub, ResourceSync string
	ContentType              string
	Body                     []byte
	Document                 *changefeed.Document // the parsed body
	Signed                   bool                 // the signature was present and valid
	// Scheme is the signature that was verified: wire.SchemeWebSub
	// (X-Hub-Signature) or wire.SchemeStandard; "" when not signed.
	Scheme string
	// MessageID is the webhook-id of a delivery verified under
	// wire.SchemeStandard: the same on every retry of one notification.
	MessageID string
}

// Config configures a Handler.
type Config struct {
	// Callback is the public URL the Handler is reachable at; each
	// subscription's callback is this URL with sub=<id> added to its query.
	Callback string
	// OnNotification receives each valid delivery. An error answers the
	// hub 503 so that it retries later. It is called from the HTTP
	// handler's goroutine: hand slow work off.
	OnNotification func(ctx context.Context, n *Notification) error
	// OnDenied, when set, is told of a subscription the hub denied.
	OnDenied func(s Subscription, reason string)
	Client   *http.Client // for requests to the hub; default: 30 s timeout
	Strict   bool         // validate deliveries in Strict mode (default Lenient)
	MaxBody  int64        // default DefaultMaxBody
	Logger   *slog.Logger // default: discard
	Now      func() time.Time
	// Signatures says which signatures a delivery to a subscription with
	// a secret must carry; default AcceptEither.
	Signatures SignaturePolicy
	// Tolerance is how far a webhook-timestamp may be from Now, in either
	// direction (default wire.DefaultTolerance, five minutes).
	Tolerance time.Duration
	// MaxReplayIDs bounds the webhook-ids remembered to refuse repeats;
	// default DefaultMaxReplayIDs. Each is kept for its timestamp plus
	// Tolerance.
	MaxReplayIDs int
	// OnDiscard, when set, is told of each delivery answered 2xx but not
	// handed to OnNotification, and why: a signature that does not verify
	// (errors wrapping wire.ErrNotSigned or wire.ErrSignatureMismatch), a
	// stale timestamp (wire.ErrStaleTimestamp), a repeated webhook-id
	// (ErrReplayed), a body that is not a ResourceSync document. It is
	// called from the HTTP handler's goroutine.
	OnDiscard func(s Subscription, err error)
}

// Handler serves callbacks and keeps the table of subscriptions it made.
// Its methods are safe for concurrent use.
type Handler struct {
	cfg Config
	mu  sync.Mutex
	// subs are the subscriptions by id; pending the intents awaiting
	// verification by id.
	subs    map[string]*Subscription
	pending map[string]*intent
	replay  *replayCache // webhook-ids taken, per subscription
}

// intent is a subscribe or unsubscribe request awaiting verification.
type intent struct {
	mode   string
	topic  string
	sub    Subscription // for subscribe: recorded the moment the challenge is echoed
	result chan verdict // buffered, receives once
}

// verdict is what the hub's GET said about an intent.
type verdict struct {
	lease  time.Duration
	denied string // non-empty: the hub denied (reason, or "denied")
}

// New returns a Handler. Config.Callback is required.
func New(cfg Config) (*Handler, error) {
	if cfg.Callback == "" {
		return nil, errors.New("subscriber: Config.Callback is required")
	}
	cfg.Client = cmp.Or(cfg.Client, &http.Client{Timeout: 30 * time.Second})
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	switch cfg.Signatures {
	case AcceptEither, RequireStandard, AcceptWebSub:
	default:
		return nil, fmt.Errorf("subscriber: unknown Config.Signatures %v", cfg.Signatures)
	}
	cfg.Tolerance = tolerance(cfg.Tolerance)
	if cfg.MaxReplayIDs <= 0 {
		cfg.MaxReplayIDs = DefaultMaxReplayIDs
	}
	return &Handler{cfg: cfg, subs: map[string]*Subscription{}, pending: map[string]*intent{}, replay: newReplayCache(cfg.MaxReplayIDs)}, nil
}

// ServeHTTP answers verification and denial GETs and delivery POSTs.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		h.serveVerify(w, r)
	case http.MethodPost:
		h.serveDelivery(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "a callback takes GET (verification) or POST (delivery)", http.StatusMethodNotAllowed)
	}
}

// serveVerify echoes the challenge of an intent this Handler is waiting
// on, records a denial, and answers 404 to anything else (WebSub §5.3).
func (h *Handler) serveVerify(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, mode, topic := q.Get("sub"), q.Get("hub.mode"), q.Get("hub.topic")
	switch mode {
	case "subscribe", "unsubscribe":
		challenge := q.Get("hub.challenge")
		var lease time.Duration
		if n, err := strconv.ParseInt(q.Get("hub.lease_seconds"), 10, 64); err == nil && n > 0 {
			lease = time.Duration(n) * time.Second
		}
		h.mu.Lock()
		in := h.pending[id]
		ok := in != nil && in.mode == mode && in.topic == topic && challenge != ""
		if ok {
			delete(h.pending, id) // a challenge is answered once
			if mode == "subscribe" {
				// the hub may deliver as soon as it has the challenge back:
				// accept deliveries from now on, not from when Subscribe returns
				s := in.sub
				s.Lease, s.Verified = lease, h.cfg.Now()
				h.subs[id] = &s
			}
		}
		h.mu.Unlock()
		if !ok {
			h.cfg.Logger.Info("verification refused: no such pending request", "sub", id, "mode", mode, "topic", topic)
			http.NotFound(w, r)
			return
		}
		in.result <- verdict{lease: lease}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, challenge)
	case "denied":
		reason := q.Get("hub.reason")
		reason = cmp.Or(reason, "denied")
		h.mu.Lock()
		in := h.pending[id]
		if in != nil && in.topic == topic {
			delete(h.pending, id)
		} else {
			in = nil
		}
		s := h.subs[id]
		if s != nil && s.Topic == topic {
			delete(h.subs, id)
		} else {
			s = nil
		}
		h.mu.Unlock()
		if in == nil && s == nil {
			http.NotFound(w, r)
			return
		}
		if in != nil {
			in.result <- verdict{denied: reason}
		}
		if s != nil && h.cfg.OnDenied != nil {
			h.cfg.OnDenied(*s, reason)
		}
		h.cfg.Logger.Warn("subscription denied by the hub", "sub", id, "topic", topic, "reason", reason)
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

// serveDelivery checks, parses and hands over one delivery.
func (h *Handler) serveDelivery(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sub")
	h.mu.Lock()
	sp := h.subs[id]
	var s Subscription
	if sp != nil {
		s = *sp
	}
	h.mu.Unlock()
	if sp == nil {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.cfg.MaxBody+1))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if int64(len(body)) > h.cfg.MaxBody {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	log := h.cfg.Logger.With("sub", id, "topic", s.Topic)
	n := &Notification{Subscription: s, ContentType: r.Header.Get("Content-Type"), Body: body}
	var v verified
	if s.Secret != "" {
		v, err = h.verify(s, r.Header, body)
		if errors.Is(err, ErrReplayCacheFull) {
			log.Warn("delivery postponed", "err", err)
			w.Header().Set("Retry-After", "60")
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		if err != nil {
			// WebSub §8: ignore locally; a 2xx keeps the hub from retrying
			// something that will never verify (and answers a repeat
			// the hub sent because it lost the first answer)
			h.discard(log, s, err)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		n.Signed, n.Scheme, n.MessageID = true, v.scheme, v.msgID
	}
	links := wire.ParseLinks(r.Header.Values(wire.HeaderLink))
	n.Topic, n.Hub, n.ResourceSync = wire.FirstLink(links, wire.RelSelf), wire.FirstLink(links, wire.RelHub), wire.FirstLink(links, wire.RelResourceSync)
	if !isXML(n.ContentType) {
		h.discard(log, s, fmt.Errorf("subscriber: not XML: Content-Type %q", n.ContentType))
		w.WriteHeader(http.StatusAccepted)
		return
	}
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: h.mode(), MaxBytes: h.cfg.MaxBody})
	if err != nil {
		h.discard(log, s, fmt.Errorf("subscriber: not a valid ResourceSync document: %w", err))
		w.WriteHeader(http.StatusAccepted)
		return
	}
	n.Document = doc
	if h.cfg.OnNotification != nil {
		if err := h.cfg.OnNotification(r.Context(), n); err != nil {
			if v.scheme == wire.SchemeStandard {
				h.replay.forget(v.key) // the hub's retry must be taken
			}
			log.Warn("notification not taken; the hub will retry", "err", err)
			http.Error(w, "not taken: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

// discard logs a delivery answered 2xx but not taken, and reports it.
func (h *Handler) discard(log *slog.Logger, s Subscription, err error) {
	log.Warn("delivery discarded", "err", err)
	if h.cfg.OnDiscard != nil {
		h.cfg.OnDiscard(s, err)
	}
}

// isXML reports whether a media type is XML.
func isXML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml")
}

// errDenied wraps a hub's denial.
var errDenied = errors.New("subscriber: the hub denied the request")

func deniedError(reason string) error { return fmt.Errorf("%w: %s", errDenied, reason) }

// IsDenied reports whether err is a hub's denial of a subscription.
func IsDenied(err error) bool { return errors.Is(err, errDenied) }

func (h *Handler) mode() changefeed.Mode {
	if h.cfg.Strict {
		return changefeed.Strict
	}
	return changefeed.Lenient
}
