package delivery

import "errors"

// Coalescing defaults.
const (
	// DefaultCoalesceThreshold is the backlog above which a subscription
	// that opted in (wire.CoalesceOn) coalesces when the hub sets no
	// threshold of its own.
	DefaultCoalesceThreshold = 1000
)

// CoalesceConfig configures coalesced catch-up of webhook subscriptions
// (Config.Coalesce).
type CoalesceConfig struct {
	// Threshold: a subscription whose channel has more than Threshold
	// undelivered records receives coalesced notifications (see
	// Webhooks). 0 disables it, except for subscriptions that opted in
	// with wire.CoalesceOn, which then use DefaultCoalesceThreshold;
	// subscriptions with wire.CoalesceOff never coalesce.
	Threshold int
	// MaxEntries bounds the entries of one coalesced notification
	// (default changefeed.DefaultMaxEntries, 50,000).
	MaxEntries int
}

// errRunEnd stops a log read at the end of a run.
var errRunEnd = errors.New("end of run")
