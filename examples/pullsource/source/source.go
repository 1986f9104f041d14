// Package source is a ResourceSync Source that only serves pull-mode
// documents, the way real Sources do, one Mode each: a Change List Index
// over dated Change Lists, one Change List regenerated on every request
// (the resync reference simulator), an open Change List whose closed
// predecessors move into a Change List Archive. Config adds what lenient
// Sources do (no root from, relative locs, entries without a time or out of
// order) and a clock that is off. Reset starts its history again, as a
// restarted Source that keeps none. It sends no notification: a hub has to
// follow it. Fault makes it answer 5xx, hang or send garbage.
//
// Every response has an ETag and a Last-Modified and answers a matching
// conditional GET with 304; the Source counts requests and bytes sent.
// The resources themselves are served at /res-N (deleted ones answer 404),
// and every entry carries their md5 hash and length, so a destination can
// mirror them.
package source

import (
	"fmt"
	"sync"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// Mode is how the Source publishes its changes.
type Mode int

// Modes, each a kind of real Source.
const (
	// ModeIndex: a Change List Index over dated Change Lists; the Source
	// closes a list (its until set) every RotateEvery changes and opens
	// the next.
	ModeIndex Mode = iota
	// ModeSimulator: one Change List, named by the Capability List,
	// regenerated on every request with every change since the start, its
	// root from the start and its until the time of the request (the
	// resync reference Source).
	ModeSimulator
	// ModeArchive: one open Change List, named by the Capability List;
	// every RotateEvery changes it is closed, moved into the Change List
	// Archive, and a new open list starts where it ended.
	ModeArchive
	// ModeResourceList: no Change List, only a Resource List of the
	// resources as they are (their lastmod the time of their last change),
	// its at the time of the last change.
	ModeResourceList
	// ModeResourceListIndex: as ModeResourceList, in sitemaps of
	// RotateEvery resources under a Resource List Index.
	ModeResourceListIndex
)

// Fault is how the Source misbehaves.
type Fault int

// Faults.
const (
	FaultNone    Fault = iota
	Fault5xx           // 503 with Retry-After: 0 on every request
	FaultTimeout       // hold every request until the client gives up
	FaultGarbage       // 200 with a body that is not XML
)

// Change is one change of the Source's history.
type Change struct {
	Loc      string
	Change   changefeed.Change
	DateTime time.Time
}

// Config configures a Source.
type Config struct {
	Mode Mode
	// RotateEvery is the number of changes in a Change List before it is
	// closed (default 5; ModeSimulator never rotates).
	RotateEvery int
	// Start is the time of the Source's first list (default 2024-01-01, or
	// the Clock's time). Without a Clock, change i is made at Start + i+1
	// seconds.
	Start time.Time
	// Clock, when set, times the changes: each is made at Clock() plus
	// ClockOffset, to the second (several changes share a datetime), and
	// ModeSimulator's until is that time too. ClockOffset is how far the
	// Source's clock is off.
	Clock       func() time.Time
	ClockOffset time.Duration
	// OmitFrom leaves out the root from of every Change List; RelativeLocs
	// writes locations relative to the host; Disorder writes each pair of
	// entries in reverse order; Timeless adds to every list an entry
	// without datetime or lastmod, which is no change of the history (a
	// hub can place it nowhere). A hub follows such a Source in lenient
	// validation mode only.
	OmitFrom, RelativeLocs, Disorder, Timeless bool
}

// Source is the Source. It is safe for concurrent use.
type Source struct {
	cfg Config

	mu       sync.Mutex
	base     string
	start    time.Time
	history  []Change
	starts   []int // index in history of each list's first change
	fault    Fault
	requests int
	bytes    int
}

// New returns a Source with no changes and one open, empty Change List.
func New(cfg Config) *Source {
	if cfg.RotateEvery <= 0 {
		cfg.RotateEvery = 5
	}
	start := cfg.Start
	switch {
	case !start.IsZero():
	case cfg.Clock != nil:
		start = cfg.Clock().Add(cfg.ClockOffset).Truncate(time.Second)
	default:
		start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &Source{cfg: cfg, start: start, starts: []int{0}}
}

// SetBase sets the absolute URL the Source's documents are served at,
// without a trailing slash (for example an httptest server's URL).
func (s *Source) SetBase(base string) {
	s.mu.Lock()
	s.base = trimSlash(base)
	s.mu.Unlock()
}

// SetFault makes the Source misbehave (FaultNone: behave).
func (s *Source) SetFault(f Fault) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}

// now is the Source's clock: the Clock plus its offset, to the second.
func (s *Source) now() time.Time {
	if s.cfg.Clock == nil {
		return time.Now().UTC().Truncate(time.Second)
	}
	return s.cfg.Clock().Add(s.cfg.ClockOffset).UTC().Truncate(time.Second)
}

// Change adds n changes to resources res-0 … res-9, created first, then
// updated, every seventh deleted, and rotates the open list every
// RotateEvery changes.
func (s *Source) Change(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		i := len(s.history)
		res := fmt.Sprintf("res-%d", i%10)
		kind := changefeed.Updated
		switch {
		case i < 10:
			kind = changefeed.Created
		case i%7 == 0:
			kind = changefeed.Deleted
		}
		if i%s.cfg.RotateEvery == 0 && i > 0 && (s.cfg.Mode == ModeIndex || s.cfg.Mode == ModeArchive) {
			s.starts = append(s.starts, i)
		}
		at := s.start.Add(time.Duration(i+1) * time.Second)
		if s.cfg.Clock != nil {
			at = later(s.now(), s.last())
		}
		s.history = append(s.history, Change{Loc: res, Change: kind, DateTime: at})
	}
}

// last is the time of the last change, else the start.
func (s *Source) last() time.Time {
	if len(s.history) == 0 {
		return s.start
	}
	return s.history[len(s.history)-1].DateTime
}

// Reset starts the Source's history again, as a Source restarted without
// its history: no change, one open list (at the same URLs as before),
// starting a minute after the last change (with a Clock: its time, at
// least a second after the last change).
func (s *Source) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = s.last().Add(time.Minute)
	if s.cfg.Clock != nil {
		s.start = later(s.now(), s.last().Add(time.Second))
	}
	s.history, s.starts = nil, []int{0}
}

// contentOf is the body of a resource after change i of the history.
func contentOf(loc string, i int) []byte {
	return []byte(fmt.Sprintf("%s, version %d\n", loc, i))
}

// Files returns the Source's resources as they are now: relative location
// (res-N) to content; deleted resources are absent.
func (s *Source) Files() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.files()
}

func (s *Source) files() map[string][]byte {
	out := map[string][]byte{}
	for loc, i := range s.current() {
		out[loc] = contentOf(loc, i)
	}
	return out
}

// current maps each resource that exists to its last change.
func (s *Source) current() map[string]int {
	out := map[string]int{}
	for i, c := range s.history {
		if c.Change == changefeed.Deleted {
			delete(out, c.Loc)
			continue
		}
		out[c.Loc] = i
	}
	return out
}

// History returns every change since the start (or the last Reset), with
// absolute locations.
func (s *Source) History() []Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Change, len(s.history))
	for i, c := range s.history {
		c.Loc = s.base + "/" + c.Loc
		out[i] = c
	}
	return out
}

// Stats returns the requests served and the body bytes sent.
func (s *Source) Stats() (requests, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.bytes
}

// Lists returns the number of Change Lists (closed and open).
func (s *Source) Lists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.starts)
}

// end is the index after list k's last change.
func (s *Source) end(k int) int {
	if k+1 < len(s.starts) {
		return s.starts[k+1]
	}
	return len(s.history)
}

// window is list k's from and until (zero while open): a list starts
// where the one before ended, and a closed list ends at its last change.
func (s *Source) window(k int) (from, until time.Time) {
	from = s.start
	if k > 0 {
		from = s.history[s.starts[k]-1].DateTime
	}
	if k+1 < len(s.starts) {
		until = s.history[s.starts[k+1]-1].DateTime
	}
	return from, until
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
