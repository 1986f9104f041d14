package changefeed

import (
	"errors"
	"fmt"
	"sort"
)

// Coalesce folds a run of consecutive change notifications into as few as
// possible covering [first from, last until], each with at most maxEntries
// entries (DefaultMaxEntries when maxEntries <= 0): per resource, the net
// change — created then updated is created; created then deleted is
// nothing; updated then deleted is deleted; deleted then created is
// updated; updated then updated is updated — with the last entry's datetime,
// hash, length, type and links. Entries are in forward chronological order
// of their final datetime. Applying the result to a destination's state
// gives the state applying every original in order gives, for histories in
// which a resource is created only when absent and updated or deleted only
// when present.
//
// The documents must be change notifications in order: each from at or
// after the previous until. A document without from or until is an error.
// The first document's header (capability, rs:ln up, extensions) is kept.
func Coalesce(docs []*Document, maxEntries int) ([]*Document, error) {
	return coalesce(docs, maxEntries, false)
}

// CoalesceDeleting is Coalesce, except that a resource created and then
// deleted within the run comes out deleted instead of left out. That is
// what a destination whose state may already hold the resource needs (a
// mirror healing a gap after taking a baseline inside the run): deleting a
// resource it does not hold changes nothing, keeping one it holds would be
// wrong.
func CoalesceDeleting(docs []*Document, maxEntries int) ([]*Document, error) {
	return coalesce(docs, maxEntries, true)
}

func coalesce(docs []*Document, maxEntries int, keepDeletes bool) ([]*Document, error) {
	if len(docs) == 0 {
		return nil, errors.New("changefeed: coalesce: no documents")
	}
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	type net struct {
		first Change // the resource's first change in the run
		last  Entry  // its latest entry
		order int    // first appearance, to keep ties stable
	}
	byLoc := map[string]*net{}
	var locs []string
	for i, d := range docs {
		if d.MD.From.IsZero() || d.MD.Until.IsZero() {
			return nil, fmt.Errorf("changefeed: coalesce: document %d has no from or until", i)
		}
		if i > 0 && d.MD.From.Time.Before(docs[i-1].MD.Until.Time) {
			return nil, fmt.Errorf("changefeed: coalesce: document %d starts at %s, before the previous until %s", i, d.MD.From.Raw, docs[i-1].MD.Until.Raw)
		}
		for _, e := range d.Entries {
			if e.MD == nil {
				return nil, fmt.Errorf("changefeed: coalesce: document %d: entry %s has no rs:md", i, e.Loc)
			}
			n := byLoc[e.Loc]
			if n == nil {
				n = &net{first: e.MD.Change, order: len(locs)}
				byLoc[e.Loc] = n
				locs = append(locs, e.Loc)
			}
			n.last = e
		}
	}
	var entries []Entry
	for _, loc := range locs {
		n := byLoc[loc]
		change, keep := netChange(n.first, n.last.MD.Change)
		if !keep && keepDeletes {
			change, keep = Deleted, true
		}
		if !keep {
			continue
		}
		e := n.last
		md := *e.MD
		md.Change = change
		e.MD = &md
		entries = append(entries, e)
	}
	sort.SliceStable(entries, func(i, j int) bool {
		return entries[i].MD.DateTime.Time.Before(entries[j].MD.DateTime.Time)
	})
	first, last := docs[0], docs[len(docs)-1]
	var out []*Document
	from := first.MD.From
	for len(entries) > maxEntries || len(out) == 0 {
		n := min(len(entries), maxEntries)
		chunk := entries[:n]
		entries = entries[n:]
		until := last.MD.Until
		if len(entries) > 0 {
			until = chunk[n-1].MD.DateTime // the next chunk starts where this one ends
			if until.IsZero() {
				until = from
			}
		}
		d := &Document{Header: first.Header}
		d.MD.From, d.MD.Until = from, until
		d.Entries = chunk
		out = append(out, d)
		from = until
	}
	if len(entries) > 0 {
		d := &Document{Header: first.Header}
		d.MD.From, d.MD.Until = from, last.MD.Until
		d.Entries = entries
		out = append(out, d)
	}
	return out, nil
}

// netChange is the change that has the effect of a run of changes to one
// resource that began with first and ended with last, and whether any is
// left: a resource first created was absent before the run, any other was
// present; one last deleted is absent after it.
func netChange(first, last Change) (Change, bool) {
	before, after := first != Created, last != Deleted
	switch {
	case !before && !after:
		return "", false
	case !before:
		return Created, true
	case !after:
		return Deleted, true
	default:
		return Updated, true
	}
}
