package jslog

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The link's state from the mirror's stream info: up while the origin was
// heard within StaleAfter; since when it was last heard, remembered when
// the server forgets it (Active -1 after it gave up on a link).
func TestLinkState(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	heard := now.Add(-time.Minute)
	info := func(active time.Duration, err *jetstream.APIError) *jetstream.StreamInfo {
		return &jetstream.StreamInfo{State: jetstream.StreamState{LastSeq: 7},
			Mirror: &jetstream.StreamSourceInfo{Active: active, Lag: 3, Error: err}}
	}
	for name, tc := range map[string]struct {
		info      *jetstream.StreamInfo
		heard     time.Time
		up        bool
		since     time.Time
		withError bool
	}{
		"heard a second ago":         {info(time.Second, nil), heard, true, now.Add(-time.Second), false},
		"silent beyond StaleAfter":   {info(StaleAfter+time.Second, nil), heard, false, now.Add(-StaleAfter - time.Second), false},
		"forgotten, remembered here": {info(-1, nil), heard, false, heard, false},
		"never heard":                {info(-1, nil), time.Time{}, false, time.Time{}, false},
		"heard but failing":          {info(time.Second, &jetstream.APIError{Description: "consumer setup failed"}), heard, false, now.Add(-time.Second), true},
		"not a mirror":               {&jetstream.StreamInfo{}, heard, false, heard, false},
	} {
		st := linkState(tc.info, now, tc.heard)
		if st.Up != tc.up || !st.Since.Equal(tc.since) || (st.Err != "") != tc.withError {
			t.Errorf("%s: %+v, want up %v since %v error %v", name, st, tc.up, tc.since, tc.withError)
		}
	}
}
