package jslog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/wire"
)

// ErrMirror is returned by Append and AppendAfter on a log that mirrors
// another hub's (Config.Upstream): only the origin appends, and its
// records reach the mirror through JetStream.
var ErrMirror = errors.New("the log is a mirror of the origin's log: publish at the origin")

// StaleAfter is how long a mirror may go without hearing from the origin
// before Link reports the link down. The origin's server sends the mirror
// a heartbeat every second while the link is up, even when nothing is
// appended.
const StaleAfter = 3 * time.Second

// APIPrefix returns the subject prefix of the JetStream API of domain, as
// reached over a leaf node link.
func APIPrefix(domain string) string {
	return "$JS." + domain + ".API"
}

// LinkState is what a mirror knows of its link to the origin's log.
type LinkState struct {
	// Up is true while the origin's server has been heard from within
	// StaleAfter.
	Up bool
	// Since is when the origin was last heard from; zero when it never was
	// since the mirror's server started.
	Since time.Time
	// Lag is how many of the origin's records the mirror knows it lacks
	// (as of Since).
	Lag uint64
	// Last is the last sequence the mirror holds.
	Last uint64
	// Err is the last error of the mirror's link, "" when none.
	Err string
}

// Link reports the state of a mirror's link to the origin's log. It fails
// on a log that is not a mirror.
func (l *Log) Link(ctx context.Context) (LinkState, error) {
	if l.cfg.Upstream == "" {
		return LinkState{}, errors.New("jslog: link: the log is not a mirror")
	}
	info, err := l.info(ctx)
	if err != nil {
		return LinkState{}, fmt.Errorf("jslog: link: %w", err)
	}
	l.linkMu.Lock()
	defer l.linkMu.Unlock()
	st := linkState(info, time.Now(), l.heard)
	l.heard = st.Since
	return st, nil
}

// linkState reads the mirror's state from its stream info, taken at now;
// heard is when an earlier look last found the origin heard from. The
// server forgets when it last heard from the origin once it gives up on a
// link (Active is then -1, as for a link never up), so the mirror's own
// memory of it is the answer then.
func linkState(info *jetstream.StreamInfo, now, heard time.Time) LinkState {
	st := LinkState{Last: info.State.LastSeq, Since: heard}
	m := info.Mirror
	if m == nil {
		return st
	}
	st.Lag = m.Lag
	if m.Error != nil {
		st.Err = m.Error.Error()
	}
	if m.Active >= 0 {
		if at := now.Add(-m.Active); at.After(heard) {
			st.Since = at
		}
		st.Up = m.Active < StaleAfter && m.Error == nil
	}
	return st
}

// ensureMirror returns the mirror stream of cfg.Stream in the origin's
// domain, creating it when missing. A new mirror takes the origin's epoch
// from the origin, so cursors mean the same at every hub; an existing one
// keeps its own (the origin may be unreachable). A stream of that name
// that is not a mirror is refused: a data directory holding a hub's own
// log cannot become an edge's.
func ensureMirror(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, cfg jetstream.StreamConfig, upstream string) (jetstream.Stream, string, error) {
	st, err := js.Stream(ctx, cfg.Name)
	if err == nil {
		info := st.CachedInfo()
		if info.Config.Mirror == nil {
			return nil, "", fmt.Errorf("stream %s exists and is not a mirror: an edge hub needs its own data directory (or NATS server)", cfg.Name)
		}
		return st, storedEpoch(cfg.Name, info), nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, "", err
	}
	origin, err := jetstream.NewWithDomain(nc, upstream)
	if err != nil {
		return nil, "", err
	}
	ost, err := origin.Stream(ctx, cfg.Name)
	if err != nil {
		return nil, "", fmt.Errorf("the origin's log in JetStream domain %q: %w", upstream, err)
	}
	epoch := storedEpoch(cfg.Name, ost.CachedInfo())
	cfg.Description = "rshub notification log, a mirror of the origin's in JetStream domain " + upstream
	cfg.Subjects, cfg.Duplicates = nil, 0
	cfg.Mirror = &jetstream.StreamSource{Name: cfg.Name, External: &jetstream.ExternalStream{APIPrefix: APIPrefix(upstream)}}
	cfg.Metadata = map[string]string{wire.MetadataEpoch: epoch}
	st, err = js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return ensureMirror(ctx, nc, js, cfg, upstream) // another hub of this edge created it meanwhile
	}
	if err != nil {
		return nil, "", err
	}
	return st, epoch, nil
}
