package follow

import (
	"slices"
	"time"

	"github.com/rshub/rshub/hub"
)

// Status is what a follower has done and will do, for the admin API and
// the dashboard. It lives in the memory of the hub process that follows
// the channel (Owner) and starts again at zero when the process does.
type Status struct {
	Channel    string `json:"channel"`
	Source     string `json:"source"`
	Validation string `json:"validation"`
	Interval   string `json:"interval"`
	Plan       Plan   `json:"plan"`
	// Owner is set while this hub process follows the channel (with
	// several hubs, one follows each channel at a time).
	Owner bool `json:"owner"`
	// Polls counts polls, Requests the GETs they made (NotModified of them
	// answered 304), Bytes the body bytes fetched, Lists the Change Lists
	// that had entries to publish, Errors the failed polls.
	Polls       uint64 `json:"polls"`
	Requests    uint64 `json:"requests"`
	NotModified uint64 `json:"notModified"`
	Bytes       uint64 `json:"bytes"`
	Lists       uint64 `json:"lists"`
	Errors      uint64 `json:"errors"`
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
	LastPoll    time.Time `json:"lastPoll"`
	LastSuccess time.Time `json:"lastSuccess"`
	NextPoll    time.Time `json:"nextPoll"`
	LastError   string    `json:"lastError,omitempty"`
	// Leniencies are the rules the Source's documents broke and the hub
	// worked around (validation lenient), by rule.
	Leniencies []LeniencyCount `json:"leniencies"`
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
		i := slices.IndexFunc(s.Leniencies, func(c LeniencyCount) bool { return c.Rule == l.Rule })
		if i < 0 {
			s.Leniencies = append(s.Leniencies, LeniencyCount{Rule: l.Rule})
			i = len(s.Leniencies) - 1
		}
		c := &s.Leniencies[i]
		c.Count++
		c.Last, c.Msg = now, l.Msg
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
