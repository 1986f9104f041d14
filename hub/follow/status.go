package follow

import (
	"slices"
	"time"

	"github.com/rshub/rshub/hub"
)

// Status is what a follower has done and will do, for the admin API and
// the dashboard. The hub process that follows the channel (Owner, the one
// holding its claim) writes it to the store after its polls, at most once
// every statusEvery, so every hub sharing the store shows the same; its
// counts are the owner's since it took the channel (another hub that takes
// it over starts them again at zero).
type Status struct {
	Channel    string `json:"channel"`
	Source     string `json:"source"`
	Validation string `json:"validation"`
	Interval   string `json:"interval"`
	Plan       Plan   `json:"plan"`
	// Owner names the hub process (Config.Owner) that follows the channel
	// and wrote the status, at Updated; its claim lasts until ClaimExpires.
	// Expired is set, when the status is read, once that has passed: the
	// owner stopped and no hub has taken the channel over yet. All are
	// zero before the channel's first poll.
	Owner        string    `json:"owner"`
	Updated      time.Time `json:"updated,omitzero"`
	ClaimExpires time.Time `json:"claimExpires,omitzero"`
	Expired      bool      `json:"expired"`
	// Polls counts polls, Requests the GETs they made (NotModified of them
	// answered 304), Bytes the body bytes fetched, Lists the Change Lists
	// that had entries to publish, Errors the failed polls.
	Polls       uint64 `json:"polls"`
	Requests    uint64 `json:"requests"`
	NotModified uint64 `json:"notModified"`
	Bytes       uint64 `json:"bytes"`
	Lists       uint64 `json:"lists"`
	Errors      uint64 `json:"errors"`
	// FetchTimeout bounds each GET of the channel's Source (the engine's
	// FetchTimeout, or ten poll intervals, at least a second, when that is
	// shorter); Timeouts counts the GETs that hit it: the Source did not
	// answer, or its body did not arrive whole, in time. Nothing of such a
	// document is published; the poll fails and is tried again.
	FetchTimeout string `json:"fetchTimeout,omitempty"`
	Timeouts     uint64 `json:"timeouts"`
	// Gaps counts the notifications that left a gap after the previous one:
	// the Source's open list started after what the channel held and the
	// Source offers no index or archive to read the rest from (the hub
	// records each in the channel's continuity and in rshub_gaps_total).
	// LastGap is the last of them.
	Gaps    uint64   `json:"gaps"`
	LastGap *hub.Gap `json:"lastGap,omitempty"`
	// Resources is the size of the last Resource List read, of a Source
	// followed through its Resource List (no Change List).
	Resources int `json:"resources,omitempty"`
	// Failures is the number of failed polls in a row (the backoff).
	Failures    int       `json:"failures"`
	LastPoll    time.Time `json:"lastPoll,omitzero"`
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	NextPoll    time.Time `json:"nextPoll,omitzero"`
	LastError   string    `json:"lastError,omitempty"`
	// Leniencies are the rules the Source's documents broke and the hub
	// worked around (validation lenient), by rule; at most maxLeniencies
	// rules are kept.
	Leniencies []LeniencyCount `json:"leniencies"`
}

// Bounds of what a status keeps, so that a stored one stays well within
// hub.MaxFollowStatusLen whatever the Source serves.
const (
	maxLeniencies = 32 // rules
	maxOthers     = 8  // Capability Lists of Plan.Others
)

// statusEvery is the least time between two writes of a channel's status
// to the store.
const statusEvery = time.Second

// newStatus is the status of ch before its first poll.
func newStatus(ch hub.Channel) Status {
	return Status{Channel: ch.Name, Source: ch.Follow, Validation: ch.Validation, Interval: ch.PollEvery().String(),
		Leniencies: []LeniencyCount{}}
}

// bounded returns the status with every URL of its plan clipped and at
// most maxOthers other Capability Lists, as it is stored.
func (s Status) bounded() Status {
	p := &s.Plan
	for _, u := range []*string{&p.CapabilityList, &p.ChangeList, &p.Index, &p.Archive, &p.ResourceList} {
		*u = clip(*u)
	}
	if len(p.Others) > 0 {
		others := make([]string, 0, min(len(p.Others), maxOthers))
		for _, u := range p.Others[:min(len(p.Others), maxOthers)] {
			others = append(others, clip(u))
		}
		p.Others = others
	}
	return s
}

// LeniencyCount is how often the documents of a followed Source broke one
// rule, when last and how (the message of the last time).
type LeniencyCount struct {
	Rule  string    `json:"rule"`
	Count uint64    `json:"count"`
	Last  time.Time `json:"last"`
	Msg   string    `json:"msg"`
}

// addLeniencies counts ls at now.
func (s *Status) addLeniencies(ls []hub.Leniency, now time.Time) {
	for _, l := range ls {
		rule := clip(l.Rule)
		i := slices.IndexFunc(s.Leniencies, func(c LeniencyCount) bool { return c.Rule == rule })
		if i < 0 && len(s.Leniencies) >= maxLeniencies {
			continue
		}
		if i < 0 {
			s.Leniencies = append(s.Leniencies, LeniencyCount{Rule: rule})
			i = len(s.Leniencies) - 1
		}
		c := &s.Leniencies[i]
		c.Count++
		c.Last, c.Msg = now, clip(l.Msg)
	}
}

// clone returns a copy that shares nothing with s.
func (s Status) clone() Status {
	if s.LastGap != nil {
		g := *s.LastGap
		s.LastGap = &g
	}
	s.Leniencies = slices.Clone(s.Leniencies)
	if s.Leniencies == nil {
		s.Leniencies = []LeniencyCount{}
	}
	return s
}
