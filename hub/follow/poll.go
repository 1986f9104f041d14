package follow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

// A poll: the lists that may hold entries after the channel's anchor,
// read oldest first and published.

// poll reads the Source once: discovery when there is no plan yet, then
// every list that may hold entries after the channel's anchor, oldest
// first.
func (f *follower) poll(ctx context.Context) error {
	f.age = -1
	before := f.fetch.bytes
	defer func() { f.e.observe().Fetched(f.ch.Name, int(f.fetch.bytes-before)) }()
	if f.plan.Empty() {
		plan, err := f.discover(ctx)
		if err != nil {
			return err
		}
		f.plan = plan
		f.logger.Info("follow: discovered", "changelist", plan.ChangeList, "index", plan.Index, "archive", plan.Archive, "resourcelist", plan.ResourceList)
		if len(plan.Others) > 0 {
			f.logger.Warn("follow: the Source Description names more Capability Lists: this channel follows the first; follow each other one with a channel of its own",
				"others", len(plan.Others), "first_other", clip(plan.Others[0]))
		}
	}
	if err := f.anchor(ctx); err != nil {
		return err
	}
	if !f.plan.changes() {
		return f.pollResourceList(ctx)
	}
	for attempt := 0; ; attempt++ {
		refs, err := f.lists(ctx)
		if err != nil {
			return err
		}
		err = f.readLists(ctx, refs, attempt < rotationRereads)
		if errors.Is(err, errRotated) {
			continue // the open list moved on since the archive was read: read it again
		}
		if err != nil {
			return err
		}
		f.prune(refs)
		return nil
	}
}

// rotationRereads bounds how many times one poll reads the archive again
// because the open list began after everything the archive named
// (errRotated); after that, what is missing is a gap the hub records.
const rotationRereads = 2

// errRotated says the open Change List read begins after the end of
// everything known: the Source closed a list into its archive between the
// poll's read of the archive and its read of the open list, and the
// closed list's tail is in an archive not read yet.
var errRotated = errors.New("the open Change List began after the archive read")

// lists returns the lists a poll may read: the archive's (or its pages'),
// then the index's or the open Change List.
func (f *follower) lists(ctx context.Context) ([]ListRef, error) {
	anchor := f.seen.At
	var refs []ListRef
	if f.plan.Archive != "" {
		ls, err := f.listing(ctx, f.plan.Archive)
		if err != nil {
			return nil, err
		}
		if ls.pages {
			for _, page := range SelectLists(ls.refs, anchor, f.done) {
				pl, err := f.listing(ctx, page.URL)
				if err != nil {
					return nil, err
				}
				refs = append(refs, pl.refs...)
			}
		} else {
			refs = append(refs, ls.refs...)
		}
	}
	switch {
	case f.plan.Index != "":
		ls, err := f.listing(ctx, f.plan.Index)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ls.refs...)
	case f.plan.ChangeList != "":
		refs = append(refs, ListRef{URL: f.plan.ChangeList})
	}
	return refs, nil
}

// readLists reads the lists of refs the channel may lack, oldest first.
// With recheck, an open Change List beside an archive that begins after
// the end of every list known, and would publish entries, is not read:
// errRotated (a list closed into the archive since it was read).
func (f *follower) readLists(ctx context.Context, refs []ListRef, recheck bool) error {
	var archived time.Time // the end of the archive's lists
	for _, r := range refs {
		if r.Closed {
			archived = maxTime(archived, r.Until)
		}
	}
	for _, r := range SelectLists(refs, f.seen.At, f.done) {
		var after *time.Time // nil: no check
		if recheck && !r.Closed && f.plan.Archive != "" && r.URL == f.plan.ChangeList {
			known := maxTime(archived, f.covered, f.seen.At)
			after = &known
		}
		if err := f.readList(ctx, r, after); err != nil {
			return err
		}
	}
	return nil
}

// anchor learns what the channel holds: its anchor from the hub, and, when
// the channel's log moved without this follower, which entries at the
// anchor it holds.
func (f *follower) anchor(ctx context.Context) error {
	st, err := f.e.cfg.Hub.Continuity(ctx, f.ch)
	if err != nil {
		return fmt.Errorf("the channel's anchor: %w", err)
	}
	if st.LastSeq == f.seq && st.LastUntil.Equal(f.seen.At) {
		return nil
	}
	st, last, known, err := f.e.cfg.Hub.FollowAnchor(ctx, f.ch)
	if err != nil {
		return fmt.Errorf("the channel's anchor: %w", err)
	}
	if !known {
		f.logger.Info("follow: the channel's last notification is no longer in the log: every Source entry at its anchor counts as published", "anchor", st.LastUntil)
	}
	f.seen, f.seq, f.covered = changefeed.SeenAt(st.LastUntil, last, known), st.LastSeq, st.LastUntil
	return nil
}

// prune forgets what the follower knows of lists no longer named.
func (f *follower) prune(refs []ListRef) {
	named := map[string]bool{f.plan.Archive: true, f.plan.Index: true, f.plan.ChangeList: true}
	keys := map[string]bool{}
	for _, r := range refs {
		named[r.URL] = true
		keys[r.key()] = true
	}
	for k := range f.done {
		if !keys[k] {
			delete(f.done, k)
		}
	}
	for u := range f.fetch.memo {
		if !named[u] && f.cached[u].refs == nil {
			delete(f.fetch.memo, u)
		}
	}
}

// readList reads one Change List and publishes the entries the channel
// does not hold. An open list is read again on every poll, conditionally;
// a closed one is read to its end once, in full: a list the index newly
// shows as closed may have changed since it was last read as open in a
// way its validators do not tell.
// A non-nil known asks for errRotated when the list begins after *known
// and holds entries to publish (readLists).
func (f *follower) readList(ctx context.Context, r ListRef, known *time.Time) error {
	resp, err := f.fetch.get(ctx, r.URL, !r.Closed)
	if err != nil {
		return f.lost(r.URL, err)
	}
	if !r.Closed {
		f.noteAge(resp.maxAge)
	}
	if resp.notModified {
		// its content is the one published before
		f.close(r, time.Time{})
		return nil
	}
	doc, guessedFrom, err := f.parse(r.URL, resp.body)
	if err != nil {
		return err
	}
	batch := hub.Followed{Doc: doc, Entries: changefeed.Fresh(doc.Entries, f.seen)}
	if known != nil && len(batch.Entries) > 0 && !guessedFrom && doc.MD.From.Time.After(*known) {
		return errRotated
	}
	if len(batch.Entries) > 0 {
		listFrom := doc.MD.From.Time
		if guessedFrom {
			listFrom = time.Time{} // unknown: no gap can be told
		}
		batch.From, batch.Until = Window(f.seen.At, f.covered, listFrom, doc.MD.Until.Time, r.Closed, batch.Entries)
	}
	res, err := f.e.cfg.Hub.PublishFollowed(ctx, f.ch, batch)
	if err != nil {
		return fmt.Errorf("%s: %w", clip(r.URL), err)
	}
	if !res.Unchanged {
		f.seen, f.seq = changefeed.Advance(f.seen, batch.Entries, batch.Until), res.Seq
		f.covered = maxTime(f.covered, batch.Until)
		f.counted(res)
	}
	f.fetch.keep(resp)
	f.close(r, doc.MD.Until.Time)
	return nil
}

// close notes a closed list read to its end (until: its root's until).
func (f *follower) close(r ListRef, until time.Time) {
	if r.Closed {
		f.done[r.key()] = true
		f.covered = maxTime(f.covered, r.Until, until)
	}
}

func maxTime(t time.Time, ts ...time.Time) time.Time {
	for _, u := range ts {
		if u.After(t) {
			t = u
		}
	}
	return t
}
