package hub

import (
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/wire"
)

// Polling bounds of a followed channel (Channel.PollInterval).
const (
	// DefaultPollInterval is how often a followed Source is polled when
	// its channel names no interval.
	DefaultPollInterval = time.Minute
	// MinPollInterval is the shortest poll interval a channel may ask for
	// (tests poll a loopback Source every few milliseconds).
	MinPollInterval = 10 * time.Millisecond
	// MaxPollInterval is the longest poll interval.
	MaxPollInterval = 24 * time.Hour
)

// PollEvery returns the channel's poll interval: PollInterval parsed, or
// DefaultPollInterval when it is empty or invalid (checkChannel refuses an
// invalid one).
func (ch Channel) PollEvery() time.Duration {
	d, err := time.ParseDuration(ch.PollInterval)
	if ch.PollInterval == "" || err != nil {
		return DefaultPollInterval
	}
	return d
}

// Lenient reports whether documents fetched for the channel are read in
// lenient validation mode.
func (ch Channel) Lenient() bool { return ch.Validation == ValidationLenient }

// checkFollow normalises and validates the fields of a followed channel: a
// followed channel without a topic is hosted by the hub (named after the
// Source URL when it has no name), its trust defaults to TrustFollow, its
// validation to ValidationStrict.
func checkFollow(ch Channel) (Channel, error) {
	if ch.Follow == "" {
		if ch.PollInterval != "" || ch.Validation != "" {
			return ch, errors.New("pollInterval and validation apply to a followed channel only (follow)")
		}
		return ch, nil
	}
	if err := checkLen("the Source URL (follow)", ch.Follow, MaxTopicLen); err != nil {
		return ch, err
	}
	if err := checkHTTPURL(ch.Follow); err != nil {
		return ch, fmt.Errorf("follow: %w", err)
	}
	if ch.PollInterval != "" {
		d, err := time.ParseDuration(ch.PollInterval)
		if err != nil || d < MinPollInterval || d > MaxPollInterval {
			return ch, fmt.Errorf("pollInterval %q must be a Go duration between %s and %s", wire.Clip(ch.PollInterval), MinPollInterval, MaxPollInterval)
		}
	}
	switch ch.Validation {
	case "":
		ch.Validation = ValidationStrict
	case ValidationStrict, ValidationLenient:
	default:
		return ch, fmt.Errorf("validation %q must be strict or lenient", wire.Clip(ch.Validation))
	}
	if ch.Topic == "" {
		ch.Hosted = true
		if ch.Name == "" {
			ch.Name = nameForTopic(ch.Follow)
		}
	}
	if ch.Trust == "" && ch.Token == "" {
		ch.Trust = TrustFollow
	}
	return ch, nil
}
