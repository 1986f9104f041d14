// Package admin is the hub operator's HTTP API under /admin/: channels and
// their continuity anchors, subscriptions, their attempt logs, dead letters
// and their redrive,
// the webhook delivery engine's per-subscription health, and the follower's
// status per followed channel (polls, bytes, errors, leniencies).
//
// It sits above the hub and the delivery engines and reads both through the
// small interfaces it declares: [Hub] (a *hub.Hub), [Store] (a hub.Store)
// and [Deliveries] (a *delivery.Webhooks). Every route needs the admin
// token as a Bearer token; answers are JSON, refusals plain text with a
// reason. Lists are paged with an opaque cursor and a Link rel="next"
// header (see cursor.go), subscriptions shard by shard, so that a page
// costs the same with 100 subscriptions as with 100,000; GET
// /admin/summary counts them. A delivery engine that also implements
// [DeliveryIndex] spares the API a walk of all its queues per request.
package admin

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/follow"
	"github.com/rshub/rshub/wire"
)

// Channels is what the admin API needs of the hub to show and change
// channels.
type Channels interface {
	ChannelByName(ctx context.Context, name string) (hub.Channel, error)
	ChannelState(ctx context.Context, topic string) (hub.ChannelState, error)
	PutChannel(ctx context.Context, c hub.Channel) (hub.Channel, error)
	// CreateChannel is PutChannel refusing a name or topic another
	// channel has (*hub.ExistsError).
	CreateChannel(ctx context.Context, c hub.Channel) (hub.Channel, error)
	DeleteChannel(ctx context.Context, c hub.Channel) error
}

// Continuity is what the admin API needs of the hub to show and reset a
// channel's continuity anchor.
type Continuity interface {
	Continuity(ctx context.Context, c hub.Channel) (hub.ChannelState, error)
	ResetContinuity(ctx context.Context, c hub.Channel, until time.Time, by string) (hub.ChannelState, error)
	// MaxClockSkew is how far ahead of Now an anchor may lie.
	MaxClockSkew() time.Duration
	Now() time.Time
}

// Subscriptions is what the admin API needs of the hub to end a
// subscription and to set its rate.
type Subscriptions interface {
	DenySubscription(ctx context.Context, s hub.Subscription, reason string) error
	// SetOperatorRate sets the operator's deliveries per second of the
	// subscription id, 0 removing it.
	SetOperatorRate(ctx context.Context, id string, rate float64) (hub.Subscription, error)
}

// Hub is the hub as the admin API uses it; *hub.Hub implements it.
type Hub interface {
	Channels
	Continuity
	Subscriptions
}

// Store is what the admin API reads from the hub's state store; every
// hub.Store implements it.
type Store interface {
	Channels(ctx context.Context) ([]hub.Channel, error)
	Subscription(ctx context.Context, id string) (hub.Subscription, error)
	Subscriptions(ctx context.Context, topic string) ([]hub.Subscription, error)
	DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error)
	Attempts(ctx context.Context, subID string) ([]hub.Attempt, error)
	SubscriptionsInShard(ctx context.Context, shard int) ([]hub.Subscription, error)
	ShardVersions(ctx context.Context) ([]uint64, error)
}

// Deliveries is the webhook delivery engine as the admin API uses it;
// *delivery.Webhooks implements it.
type Deliveries interface {
	// Stats reports the delivery health of every subscription it runs.
	Stats() []delivery.SubStats
	// Redrive re-delivers one dead letter.
	Redrive(ctx context.Context, subID, deadLetterID string) error
}

// Follows is the follower engine as the admin API uses it;
// *follow.Engine implements it.
type Follows interface {
	// Status returns the status of a followed channel, as the store has it.
	Status(ctx context.Context, ch hub.Channel) (follow.Status, error)
	// Statuses returns the status of every followed channel, as the store
	// has it: every hub sharing the store answers the same.
	Statuses(ctx context.Context) ([]follow.Status, error)
	// PollNow makes a followed channel's follower poll at once.
	PollNow(name string) bool
}

// Config configures an API. Token, Hub and Store are required.
type Config struct {
	// Token is the admin token every request must carry as
	// "Authorization: Bearer <token>".
	Token string
	Hub   Hub
	Store Store
	// Deliveries is the webhook delivery engine; without it the API
	// reports no deliveries and answers a redrive 501.
	Deliveries Deliveries
	// Follows is the follower engine; without it the API shows no follow
	// status and answers GET /admin/follow with [].
	Follows Follows
	// Quarantine is the log's list of messages that never decode; without
	// it GET /admin/quarantine answers an empty list.
	Quarantine Quarantine
	// ChannelsReadOnly, when set, is why channels cannot be created,
	// changed or deleted here (an edge hub's are its origin's): PUT and
	// DELETE of a channel answer 409 with it.
	ChannelsReadOnly string
	Logger           *slog.Logger
}

// API is the admin API.
type API struct {
	cfg    Config
	log    *slog.Logger
	counts *shardCounts // the summary's
}

// New validates cfg and returns an API.
func New(cfg Config) (*API, error) {
	if cfg.Token == "" {
		return nil, errors.New("admin: Token is required")
	}
	if cfg.Hub == nil || cfg.Store == nil {
		return nil, errors.New("admin: Hub and Store are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return &API{cfg: cfg, log: cfg.Logger, counts: &shardCounts{}}, nil
}

// Register adds the admin API's routes under /admin/ to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin/openapi.json", serveOpenAPI)
	mux.Handle("GET /admin/channels", a.handle(a.listChannels))
	mux.Handle("POST /admin/channels", a.handle(a.createChannel))
	mux.Handle("GET /admin/channels/{name}", a.handle(a.getChannel))
	mux.Handle("PUT /admin/channels/{name}", a.handle(a.putChannel))
	mux.Handle("DELETE /admin/channels/{name}", a.handle(a.deleteChannel))
	mux.Handle("GET /admin/channels/{name}/continuity", a.handle(a.continuity))
	mux.Handle("POST /admin/channels/{name}/continuity/reset", a.handle(a.resetContinuity))
	mux.Handle("GET /admin/subscriptions", a.handle(a.listSubs))
	mux.Handle("GET /admin/subscriptions/{id}", a.handle(a.getSub))
	mux.Handle("PATCH /admin/subscriptions/{id}", a.handle(a.patchSub))
	mux.Handle("DELETE /admin/subscriptions/{id}", a.handle(a.deleteSub))
	mux.Handle("GET /admin/subscriptions/{id}/deadletters", a.handle(a.deadLetters))
	mux.Handle("POST /admin/subscriptions/{id}/deadletters/{dl}/redrive", a.handle(a.redrive))
	mux.Handle("GET /admin/subscriptions/{id}/attempts", a.handle(a.attempts))
	mux.Handle("GET /admin/deliveries", a.handle(a.deliveries))
	mux.Handle("GET /admin/deliveries/hosts", a.handle(a.deliveryHosts))
	mux.Handle("GET /admin/summary", a.handle(a.summary))
	mux.Handle("GET /admin/follow", a.handle(a.follows))
	mux.Handle("POST /admin/channels/{name}/follow/poll", a.handle(a.pollNow))
	mux.Handle("GET /admin/quarantine", a.handle(a.quarantine))
}

// retryAfter is the Retry-After, in seconds, of a 503 when the store or
// the log did not answer.
const retryAfter = 5

// handle wraps a handler with the admin token check. A paged answer is
// written as its list with a Link header to its next page. Errors become
// plain text: an *apiError its status, hub.ErrNotFound 404, anything else (the
// store or the log did not answer) 503 with Retry-After. A POST answers
// 201 unless the handler returns an ok.
func (a *API) handle(fn func(*http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(tok), []byte(a.cfg.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="rshub-admin"`)
			plainError(w, http.StatusUnauthorized, "admin API needs Authorization: Bearer <admin token>")
			return
		}
		v, err := fn(r)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if v == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		status := http.StatusOK
		if p, isPage := v.(paged); isPage {
			if link := p.nextLink(r); link != "" {
				w.Header().Set("Link", link)
			}
			v = p.list()
		} else if o, isOK := v.(ok); isOK {
			v = o.v
		} else if c, isCreated := v.(created); isCreated {
			v, status = c.v, http.StatusCreated
		} else if r.Method == http.MethodPost {
			status = http.StatusCreated
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
	})
}

// fail answers err as handle documents.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		plainError(w, ae.status, ae.msg)
	case errors.Is(err, hub.ErrNotFound):
		plainError(w, http.StatusNotFound, "not found: "+wire.Clip(err.Error()))
	default:
		a.log.Error("admin API", "method", r.Method, "path", wire.Clip(r.URL.Path), "err", wire.Clip(err.Error()))
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		plainError(w, http.StatusServiceUnavailable, "the hub's store or log did not answer; retry later")
	}
}

// plainError answers status with msg as plain text.
func plainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// apiError is a refusal with its status and reason.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// ok is a POST's answer that is a 200, not a 201.
type ok struct{ v any }

// created is an answer that is a 201 whatever the method (a PUT that
// created).
type created struct{ v any }

// nonNil returns list, or an empty list of its type when it is nil, so
// that JSON lists are [] and never null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
