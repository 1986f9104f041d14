package mirror

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// progressEvery is how many entries pass between progress reports.
const progressEvery = 50

// applyEntries applies entries in order. progress, when set, is told how
// many are done every progressEvery entries and at the end.
func (m *Mirror) applyEntries(ctx context.Context, entries []*changefeed.Entry, progress func(done int)) error {
	for i, e := range entries {
		if err := m.applyEntry(ctx, e); err != nil {
			return err
		}
		if progress != nil && ((i+1)%progressEvery == 0 || i+1 == len(entries)) {
			progress(i + 1)
		}
	}
	return nil
}

// applyEntry applies one change. Entries that cannot be applied for good
// (no safe path, gone, changed since) are reported and skipped; transient
// failures are retried, then returned.
func (m *Mirror) applyEntry(ctx context.Context, e *changefeed.Entry) error {
	change := changefeed.Updated
	if e.MD != nil && e.MD.Change != "" {
		change = e.MD.Change
	}
	rel, err := MapPath(m.cfg.BaseURL, e.Loc)
	if err != nil {
		m.emit(Event{Kind: EventSkipped, Loc: e.Loc, Change: string(change), Message: err.Error()})
		return nil
	}
	path := filepath.Join(m.cfg.Dir, filepath.FromSlash(rel))
	if change == changefeed.Deleted {
		if err := remove(m.cfg.Dir, path); err != nil {
			return fmt.Errorf("mirror: remove %s: %w", rel, err)
		}
		m.emit(Event{Kind: EventFile, Loc: e.Loc, Path: rel, Change: string(change)})
		return nil
	}
	exp := expectOf(e.MD)
	if localMatches(path, exp) {
		return nil
	}
	for attempt := 1; ; attempt++ {
		err = download(ctx, m.cfg.Client, e.Loc, path, exp)
		switch {
		case err == nil:
			m.emit(Event{Kind: EventFile, Loc: e.Loc, Path: rel, Change: string(change)})
			return nil
		case errors.Is(err, ErrGone), errors.Is(err, ErrStale):
			m.emit(Event{Kind: EventSkipped, Loc: e.Loc, Path: rel, Change: string(change), Message: err.Error() + "; a later change will bring it"})
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case attempt >= m.cfg.Attempts:
			return fmt.Errorf("mirror: fetch %s: %w", e.Loc, err)
		}
		m.cfg.Logger.Info("fetch failed, retrying", "loc", e.Loc, "attempt", attempt, "err", err)
		t := time.NewTimer(time.Duration(attempt*attempt) * 100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
