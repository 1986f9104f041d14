package hub

import "time"

// Observer receives the hub's events, for metrics. Implementations must be
// safe for concurrent use and must not block.
type Observer interface {
	// Published is called for each notification stored in the log.
	Published(channel string, bytes int, took time.Duration)
	// Rejected is called for each refused publish, with a short reason code.
	Rejected(reason string)
	// Verified is called after each verification of intent.
	Verified(mode string, ok bool)
	// GapRecorded is called when a notification leaves a gap.
	GapRecorded(channel string)
	// Unstored is called when the store did not take a verified
	// subscribe or unsubscribe request within Config.StoreRetry; a
	// subscribe is then denied.
	Unstored(mode string)
}

type nopObserver struct{}

func (nopObserver) Published(string, int, time.Duration) {}
func (nopObserver) Rejected(string)                      {}
func (nopObserver) Verified(string, bool)                {}
func (nopObserver) GapRecorded(string)                   {}
func (nopObserver) Unstored(string)                      {}
