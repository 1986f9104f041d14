package source

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/dataset"
	"github.com/rshub/rshub/client/publisher"
)

// Announce publishes, one change notification each and in order, the
// patches the hub has not acknowledged yet: each notification names the
// patch file (created, with its hash, length and type
// application/vnd.timbuctoo-rdf.nquads_unified_diff). It stops at the
// first error; the next call goes on from there (a notification the hub
// may have received is sent again with identical bytes). Without a hub it
// does nothing.
func (s *Source) Announce(ctx context.Context) error {
	if s.pub == nil {
		return nil
	}
	s.annMu.Lock()
	defer s.annMu.Unlock()
	_, flushed, err := s.pub.Flush(ctx)
	if err != nil {
		return s.fail(fmt.Errorf("datasetsource: publish: %w", err))
	}
	s.mu.Lock()
	if s.st.Announcing > s.st.Published && (flushed || !s.pub.Until().Equal(s.st.AnnounceFrom)) {
		// the notification of patch Announcing reached the hub: just now
		// (flushed), or before the Source stopped
		s.st.Published = s.st.Announcing
		err = saveState(s.cfg.Dir, &s.st)
	}
	s.mu.Unlock()
	if err != nil {
		return s.fail(err)
	}
	for {
		s.mu.Lock()
		next := s.st.Published + 1
		if next > len(s.st.Patches) {
			s.lastErr = ""
			s.mu.Unlock()
			return nil
		}
		p := s.st.Patches[next-1]
		s.st.Announcing, s.st.AnnounceFrom = next, s.pub.Until()
		err := saveState(s.cfg.Dir, &s.st)
		s.mu.Unlock()
		if err != nil {
			return s.fail(err)
		}
		res, err := s.pub.Publish(ctx, []publisher.Change{{
			Loc: s.PatchURL(p), Change: changefeed.Created, DateTime: p.Time, LastMod: p.Time,
			Hash: p.Hash, Length: p.Length, Type: dataset.MediaTypePatch,
		}})
		if err != nil {
			var he *publisher.HubError
			if errors.As(err, &he) {
				// refused: nothing is pending; this patch is announced
				// again, in a new notification, at the next call
				s.mu.Lock()
				s.st.Announcing = s.st.Published
				s.mu.Unlock()
			}
			return s.fail(fmt.Errorf("datasetsource: publish patch %d: %w", p.N, err))
		}
		s.mu.Lock()
		s.st.Published = next
		err = saveState(s.cfg.Dir, &s.st)
		s.mu.Unlock()
		if err != nil {
			return s.fail(err)
		}
		s.cfg.Logger.Info("published", "patch", p.N, "seq", res.Seq, "adds", p.Adds, "retracts", p.Retracts)
		if s.cfg.OnPublish != nil {
			s.cfg.OnPublish(p)
		}
	}
}

func (s *Source) fail(err error) error {
	s.mu.Lock()
	s.lastErr = err.Error()
	s.mu.Unlock()
	return err
}

// Run edits every Interval until Config.Edits edits exist (or forever when
// it is 0) and announces the patches as they are made, retrying while the
// hub does not answer, until ctx ends. It returns ctx's error, or the
// error of an edit (the disk failed).
func (s *Source) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.announceLoop(ctx)
	}()
	defer func() { <-done }()
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if s.cfg.Edits == 0 || s.Status().Edits < s.cfg.Edits {
			if _, err := s.Edit(ctx, 1); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// announceLoop announces on every edit, and every second while patches
// wait for the hub.
func (s *Source) announceLoop(ctx context.Context) {
	retry := time.NewTicker(time.Second)
	defer retry.Stop()
	for {
		if err := s.Announce(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("announcing patches", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.announce:
		case <-retry.C:
		}
	}
}

// Status is what /status reports.
type Status struct {
	Topic     string    `json:"topic"`
	Patches   int       `json:"patches"`   // patch files, the initial load included
	Edits     int       `json:"edits"`     // random edits: Patches - 1
	Published int       `json:"published"` // patches the hub acknowledged
	Quads     int       `json:"quads"`     // in the current dataset
	Hash      string    `json:"hash"`      // of dataset.nq
	Until     time.Time `json:"until"`     // until of the last acknowledged notification
	LastError string    `json:"lastError,omitempty"`
}

// Status returns the Source's progress.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Topic: s.cfg.Topic, Patches: len(s.st.Patches), Edits: max(len(s.st.Patches)-1, 0), Published: s.st.Published,
		Quads: s.cur.Len(), Hash: hashOf(s.export), LastError: s.lastErr}
	if s.pub != nil {
		st.Until = s.pub.Until()
	}
	return st
}
