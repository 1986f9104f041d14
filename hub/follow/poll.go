package follow

import (
	"context"
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
	refs, open, err := f.lists(ctx)
	if err != nil {
		return err
	}
	if err := f.readLists(ctx, refs, open); err != nil {
		return err
	}
	f.prune(refs)
	return nil
}

// lists returns the lists a poll may read, the archive's (or its pages')
// first, then the index's or the open Change List, with the open Change
// List already read when an archive sits beside it (nil otherwise). The
// Source's current lists are read before its archive: a list the Source
// closes into its archive meanwhile is then in the archive read after,
// whole, and read before what the current lists held of it (then nothing
// fresh). Read the other way round, a list closed between the two reads
// would be in neither, and the open list's newer entries published first.
func (f *follower) lists(ctx context.Context) ([]ListRef, *response, error) {
	var current []ListRef
	var open *response
	switch {
	case f.plan.Index != "":
		ls, err := f.listing(ctx, f.plan.Index)
		if err != nil {
			return nil, nil, err
		}
		current = ls.refs
	case f.plan.ChangeList != "":
		current = []ListRef{{URL: f.plan.ChangeList}}
		if f.plan.Archive != "" {
			resp, err := f.fetch.get(ctx, f.plan.ChangeList, true)
			if err != nil {
				return nil, nil, f.lost(f.plan.ChangeList, err)
			}
			open = &resp
		}
	}
	if f.plan.Archive == "" {
		return current, open, nil
	}
	var refs []ListRef
	ls, err := f.listing(ctx, f.plan.Archive)
	if err != nil {
		return nil, nil, err
	}
	if ls.pages {
		for _, page := range SelectLists(ls.refs, f.seen.At, f.done) {
			pl, err := f.listing(ctx, page.URL)
			if err != nil {
				return nil, nil, err
			}
			refs = append(refs, pl.refs...)
		}
	} else {
		refs = append(refs, ls.refs...)
	}
	// the archive's lists come first: SelectLists keeps a list's first
	// mention, the archive's closed one over the index's open one
	return append(refs, current...), open, nil
}

// readLists reads the lists of refs the channel may lack, oldest first;
// open, when not nil, is the open Change List as lists read it.
func (f *follower) readLists(ctx context.Context, refs []ListRef, open *response) error {
	for _, r := range SelectLists(refs, f.seen.At, f.done) {
		if open != nil && !r.Closed && r.URL == f.plan.ChangeList {
			if err := f.publishList(ctx, r, *open); err != nil {
				return err
			}
			continue
		}
		if err := f.readList(ctx, r); err != nil {
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
// does not hold (publishList). An open list is read again on every poll,
// conditionally; a closed one is read to its end once, in full: a list the
// index newly shows as closed may have changed since it was last read as
// open in a way its validators do not tell.
func (f *follower) readList(ctx context.Context, r ListRef) error {
	resp, err := f.fetch.get(ctx, r.URL, !r.Closed)
	if err != nil {
		return f.lost(r.URL, err)
	}
	return f.publishList(ctx, r, resp)
}

// publishList publishes the entries of the list r, read as resp, that the
// channel does not hold.
func (f *follower) publishList(ctx context.Context, r ListRef, resp response) error {
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
