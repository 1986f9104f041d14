package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// ErrNotFound is returned by stores when a key does not exist.
var ErrNotFound = errors.New("not found")

// Trust says how the hub decides whether a publisher may post to a channel.
type Trust string

// Publisher trust modes.
const (
	// TrustToken requires "Authorization: Bearer <token>" on every publish.
	TrustToken Trust = "token"
	// TrustVerifiedTopic requires the topic URI's own Link headers to name this hub.
	TrustVerifiedTopic Trust = "verified"
	// TrustOpen accepts any publisher (demos only; logged loudly).
	TrustOpen Trust = "open"
	// TrustFollow accepts no publisher: the hub itself follows the
	// channel's Source (Channel.Follow) and is its only publisher.
	TrustFollow Trust = "follow"
)

// Validation modes of a followed channel (Channel.Validation).
const (
	// ValidationStrict refuses a fetched document that breaks any rule.
	ValidationStrict = "strict"
	// ValidationLenient accepts a fetched document that breaks a rule the
	// hub can work around, and records every such leniency.
	ValidationLenient = "lenient"
)

// Channel is one Change Notification channel: one topic URI, one Source
// Capability List.
type Channel struct {
	Topic          string    `json:"topic"`                    // topic URI, the channel's identity
	Name           string    `json:"name"`                     // short URL-safe slug for paths and NATS subjects
	Trust          Trust     `json:"trust"`                    // publisher trust
	Token          string    `json:"token,omitempty"`          // bearer token when Trust is TrustToken
	CapabilityList string    `json:"capabilityList,omitempty"` // the Source's Capability List, if known
	Hosted         bool      `json:"hosted"`                   // the hub answers HEAD/GET on the topic URI itself
	Created        time.Time `json:"created"`
	// Follow is the URL of a pull-only Source the hub follows for this
	// channel: its Source Description, a Capability List, a Change List or
	// a Change List Index; "" when the Source publishes by itself.
	Follow string `json:"follow,omitempty"`
	// PollInterval is how often the hub polls Follow, as a Go duration
	// ("30s"); "" means DefaultPollInterval.
	PollInterval string `json:"pollInterval,omitempty"`
	// Validation is ValidationStrict (the default) or ValidationLenient,
	// for the documents fetched from Follow.
	Validation string `json:"validation,omitempty"`
	// DescribedBy is the URL of a document describing the channel's
	// dataset (VoID-style RDF: title, description, rights holder, contact,
	// license, provenance); the Capability List and the Source
	// Description's entry link to it with rel="describedby". "" when none.
	DescribedBy string `json:"describedBy,omitempty"`
	// Private hides the channel from every caller whose token's
	// mercure.subscribe claim does not cover Topic (see private.go).
	Private bool `json:"private,omitempty"`
}

// ChannelState is the mutable progress of a channel: how far its history
// reaches and which gaps were seen.
type ChannelState struct {
	Topic     string    `json:"topic"`
	LastSeq   uint64    `json:"lastSeq"`            // log sequence of the last accepted notification
	LastFrom  time.Time `json:"lastFrom,omitzero"`  // from of the last accepted notification
	LastUntil time.Time `json:"lastUntil,omitzero"` // until of the last accepted notification
	LastHash  string    `json:"lastHash"`           // idempotency key of the last accepted notification
	Published uint64    `json:"published"`          // notifications accepted
	Gaps      []Gap     `json:"gaps,omitempty"`
	// Resets are the operator's resets of the continuity anchor (LastUntil), oldest first; see state.go.
	Resets []ContinuityReset `json:"resets,omitempty"`
}

// Gap is a window of Source time no notification covered.
type Gap struct {
	From     time.Time `json:"from"`
	Until    time.Time `json:"until,omitzero"`
	Seq      uint64    `json:"seq"` // the notification after the gap
	Recorded time.Time `json:"recorded,omitzero"`
}

// SubState is the lifecycle state of a subscription.
type SubState string

// Subscription states.
const (
	SubPending SubState = "pending" // requested, verification of intent not yet done
	SubActive  SubState = "active"
	SubExpired SubState = "expired"
)

// Subscription is a WebSub subscription, keyed by (Topic, Callback).
type Subscription struct {
	ID       string    `json:"id"` // stable key derived from Topic and Callback, see SubscriptionID
	Topic    string    `json:"topic"`
	Channel  string    `json:"channel"`  // Name of the topic's channel
	Callback string    `json:"callback"` // exactly as given, query string included
	Secret   string    `json:"secret,omitempty"`
	Lease    int64     `json:"leaseSeconds"`
	Expires  time.Time `json:"expires,omitzero"`
	State    SubState  `json:"state"`
	Created  time.Time `json:"created"`
	Verified time.Time `json:"verified,omitzero"`
	StartSeq uint64    `json:"startSeq"` // first log sequence this subscription receives
	// Scheme is how deliveries are signed when Secret is set: "" or
	// wire.SchemeWebSub, wire.SchemeStandard, wire.SchemeBoth.
	Scheme string `json:"scheme,omitempty"`
	// Filter selects the entries delivered; nil delivers every entry.
	Filter *changefeed.Filter `json:"filter,omitempty"`
	// Coalesce is the subscription's choice about coalesced catch-up:
	// "" (the hub's setting), wire.CoalesceOn or wire.CoalesceOff.
	Coalesce string `json:"coalesce,omitempty"`
	// Rate is the deliveries per second the subscriber asked for
	// (wire.ParamRate); 0 takes the hub's default. OperatorRate, set by the
	// hub operator (SetOperatorRate), wins over it and outlives
	// resubscriptions. The delivery engine caps both at its maximum.
	Rate         float64 `json:"rate,omitempty"`
	OperatorRate float64 `json:"operatorRate,omitempty"`
	// Format is how deliveries are rendered: "" the stored body, FormatAtom
	// an Atom document of the notification's entries (the subscription's
	// Topic is then the channel's feed URL; see feedtopic.go).
	Format string `json:"format,omitempty"`
	// Authorized says the subscriber showed a token covering the
	// channel's topic; its lease ends with the token. A private channel
	// keeps only authorized subscriptions.
	Authorized bool `json:"authorized,omitempty"`
}

// Cursor is a destination's position: the last log sequence handled and the
// Source datetime (until) it corresponds to.
type Cursor struct {
	Seq   uint64    `json:"seq"`
	Until time.Time `json:"until,omitzero"`
}

// DeadLetter is a notification whose delivery to one subscription gave up.
type DeadLetter struct {
	ID         string    `json:"id"`
	SubID      string    `json:"subId"`
	Seq        uint64    `json:"seq"`
	Attempts   int       `json:"attempts"`
	LastStatus int       `json:"lastStatus"` // last HTTP status, 0 for transport errors
	Reason     string    `json:"reason"`
	Failed     time.Time `json:"failed,omitzero"`
}

// SubscriptionID is the stable key of the subscription (topic, callback):
// 32 hex digits of SHA-256 over both, safe in store keys and URL paths.
func SubscriptionID(topic, callback string) string {
	h := sha256.New()
	h.Write([]byte(topic))
	h.Write([]byte{0})
	h.Write([]byte(callback))
	return hex.EncodeToString(h.Sum(nil)[:16])
}
