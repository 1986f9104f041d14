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
//
// An existing mirror whose origin answers with another epoch (the
// origin's log was created again: its data lost) is deleted and created
// anew from the origin's new log, and replaced names the epoch it had: a
// mirror keeps the sequences it holds and would take none of the new
// log's below them, and serve the rest under the old epoch.
func ensureMirror(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, cfg jetstream.StreamConfig, upstream string, await bool) (st jetstream.Stream, epoch, replaced string, err error) {
	st, err = js.Stream(ctx, cfg.Name)
	if err == nil {
		info := st.CachedInfo()
		if info.Config.Mirror == nil {
			return nil, "", "", fmt.Errorf("stream %s exists and is not a mirror: an edge hub needs its own data directory (or NATS server)", cfg.Name)
		}
		held := storedEpoch(cfg.Name, info)
		octx, cancel := context.WithTimeout(ctx, originEpochTimeout)
		now, oerr := originEpoch(octx, nc, upstream, cfg.Name)
		cancel()
		switch {
		case oerr != nil && await:
			return nil, "", "", fmt.Errorf("the origin's log in JetStream domain %q did not answer (waiting for it before serving the mirror): %w", upstream, oerr)
		case oerr != nil || now == held:
			return st, held, "", nil // the origin unreachable: serve what the mirror holds
		}
		if err := js.DeleteStream(ctx, cfg.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, "", "", fmt.Errorf("deleting the mirror of the origin's former log (epoch %s; the origin's is %s now): %w", held, now, err)
		}
		st, epoch, _, err = ensureMirror(ctx, nc, js, cfg, upstream, false)
		return st, epoch, held, err
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, "", "", err
	}
	origin, err := jetstream.NewWithDomain(nc, upstream)
	if err != nil {
		return nil, "", "", err
	}
	ost, err := origin.Stream(ctx, cfg.Name)
	if err != nil {
		return nil, "", "", fmt.Errorf("the origin's log in JetStream domain %q: %w", upstream, err)
	}
	epoch = storedEpoch(cfg.Name, ost.CachedInfo())
	cfg.Description = "rshub notification log, a mirror of the origin's in JetStream domain " + upstream
	cfg.Subjects, cfg.Duplicates = nil, 0
	cfg.Mirror = &jetstream.StreamSource{Name: cfg.Name, External: &jetstream.ExternalStream{APIPrefix: APIPrefix(upstream)}}
	cfg.Metadata = map[string]string{wire.MetadataEpoch: epoch}
	st, err = js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return ensureMirror(ctx, nc, js, cfg, upstream, await) // another hub of this edge created it meanwhile
	}
	if err != nil {
		return nil, "", "", err
	}
	return st, epoch, "", nil
}

// originEpochTimeout bounds the look at the origin's epoch when a mirror
// opens: an origin that does not answer by then is taken as unreachable.
const originEpochTimeout = 3 * time.Second

// originEpoch returns the epoch of the origin's stream name in domain
// upstream.
func originEpoch(ctx context.Context, nc *nats.Conn, upstream, name string) (string, error) {
	origin, err := jetstream.NewWithDomain(nc, upstream)
	if err != nil {
		return "", err
	}
	ost, err := origin.Stream(ctx, name)
	if err != nil {
		return "", err
	}
	return storedEpoch(name, ost.CachedInfo()), nil
}

// OriginEpoch returns the epoch of the origin's log as the origin answers
// now, for a mirror to tell whether the origin's log was created again
// (it then differs from Epoch, and the mirror must be opened again: see
// Replaced). It fails on a log that is not a mirror, and when the origin
// does not answer.
func (l *Log) OriginEpoch(ctx context.Context) (string, error) {
	if l.cfg.Upstream == "" {
		return "", errors.New("jslog: origin epoch: the log is not a mirror")
	}
	var epoch string
	err := l.conn.Do(ctx, func(ctx context.Context, nc *nats.Conn, _ uint64) (err error) {
		epoch, err = originEpoch(ctx, nc, l.cfg.Upstream, l.cfg.Stream)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("jslog: origin epoch: %w", err)
	}
	return epoch, nil
}

// Replaced returns the epoch of the mirror this log replaced when it
// opened, because the origin's log had been created again since ("" when
// it replaced none): what was positioned in that epoch (webhook cursors,
// the edge's mirror of the origin's channels) must start again.
func (l *Log) Replaced() string {
	l.linkMu.Lock()
	defer l.linkMu.Unlock()
	return l.replaced
}
