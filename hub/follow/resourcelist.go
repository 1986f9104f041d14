package follow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/follow/rldiff"
)

// Bounds of a followed Resource List: the sitemaps of its index and the
// resources of a snapshot. A snapshot lives in a file (package rldiff), so
// memory stays bounded whatever the bound: a run of rldiff.DefaultRunSize
// items while a list is read, one notification's entries while a diff is
// published.
const (
	maxSitemaps  = 1000
	maxResources = 2_000_000
)

// rlState is the last Resource List a follower read: its time, its size,
// and the file of its snapshot.
type rlState struct {
	At   time.Time
	Len  int
	path string
}

// pollResourceList follows a Source that publishes only a Resource List (or
// a Resource List Index): it streams the list, sitemap after sitemap, into
// the next snapshot, diffs it with the previous one and publishes what was
// created, updated and deleted in between, each change at the list's time
// (its at, else the hub's clock), the notifications contiguous from the
// previous list's time. The first list read is the baseline: nothing to
// publish, and when the channel holds notifications from before (the hub
// restarted: the follower's snapshot is gone) the next ones start at the
// baseline's time, a gap the hub records.
func (f *follower) pollResourceList(ctx context.Context) error {
	u := f.plan.ResourceList
	resp, body, err := f.fetch.open(ctx, u, f.rl != nil)
	if err != nil {
		return f.lost(u, err)
	}
	f.noteAge(resp.maxAge)
	if body == nil {
		return nil // not modified
	}
	defer body.Close()
	dec := changefeed.NewDecoder(body, f.decodeOptions())
	hdr, err := dec.Header()
	if err != nil {
		return fmt.Errorf("%s: %w", clip(u), err)
	}
	if hdr.MD.Capability != changefeed.CapResourceList {
		return fmt.Errorf("%s: a %q document where a Resource List was expected", clip(u), hdr.MD.Capability)
	}
	at := hdr.MD.At.Time
	if at.IsZero() {
		at = f.e.cfg.Now().UTC()
	}
	dir := f.e.snapshotDir()
	if dir == "" {
		return errors.New("follow: no directory for Resource List snapshots")
	}
	b := &rlBuilder{s: rldiff.NewSorter(dir, 0)}
	defer b.s.Abort()
	if hdr.Kind == changefeed.SitemapIndex {
		err = f.readSitemaps(ctx, u, dec, b)
	} else {
		err = addAll(dec, u, b)
	}
	if err != nil {
		return err
	}
	prev := f.rl
	if prev != nil {
		at = maxTime(at, prev.At)
	}
	next := &rlState{At: maxTime(at, f.seen.At), path: f.snapshotPath()}
	staged := next.path + ".next"
	if next.Len, err = b.s.Finish(staged); err != nil {
		return fmt.Errorf("%s: %w", clip(u), err)
	}
	defer os.Remove(staged) // after the rename below, removes nothing
	if prev != nil {
		if err := f.publishDiffs(ctx, prev, staged, next.At); err != nil {
			return err
		}
	}
	if err := os.Rename(staged, next.path); err != nil {
		return fmt.Errorf("follow: %w", err)
	}
	f.rl = next
	f.fetch.keep(resp)
	f.mu.Lock()
	f.st.Resources = next.Len
	f.mu.Unlock()
	return nil
}

// snapshotPath is the file of this follower's last Resource List.
func (f *follower) snapshotPath() string {
	sum := sha256.Sum256([]byte(f.ch.Name))
	return filepath.Join(f.e.snapshotDir(), "resourcelist-"+hex.EncodeToString(sum[:8]))
}

// dropSnapshot removes the follower's snapshot when it stops.
func (f *follower) dropSnapshot() {
	if f.rl != nil {
		_ = os.Remove(f.rl.path)
		f.rl = nil
	}
}

// rlBuilder bounds what goes into a snapshot.
type rlBuilder struct {
	s *rldiff.Sorter
	n int
}

func (f *follower) decodeOptions() changefeed.Options {
	mode := changefeed.Strict
	if f.ch.Lenient() {
		mode = changefeed.Lenient
	}
	return changefeed.Options{Mode: mode, MaxBytes: f.e.cfg.MaxBody}
}

// readSitemaps streams every sitemap an index names into b.
func (f *follower) readSitemaps(ctx context.Context, base string, idx *changefeed.Decoder, b *rlBuilder) error {
	var maps []string
	for {
		e, err := idx.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", clip(base), err)
		}
		if len(maps) == maxSitemaps {
			return fmt.Errorf("%s: more than %d sitemaps", clip(base), maxSitemaps)
		}
		maps = append(maps, resolve(base, e.Loc))
	}
	for _, m := range maps {
		_, body, err := f.fetch.open(ctx, m, false)
		if err != nil {
			return err
		}
		dec := changefeed.NewDecoder(body, f.decodeOptions())
		if _, err = dec.Header(); err == nil {
			err = addAll(dec, m, b)
		} else {
			err = fmt.Errorf("%s: %w", clip(m), err)
		}
		body.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// addAll adds every entry of a sitemap to b, locations resolved against u.
func addAll(dec *changefeed.Decoder, u string, b *rlBuilder) error {
	for {
		e, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", clip(u), err)
		}
		if b.n == maxResources {
			return fmt.Errorf("%s: the Resource List has more than %d resources", clip(u), maxResources)
		}
		e.Loc = resolve(u, e.Loc)
		if err := b.s.Add(rldiff.FromEntry(e)); err != nil {
			return err
		}
		b.n++
	}
}

// publishDiffs publishes the changes between the previous snapshot and
// the one at next, taken at until, as they are read: at most
// changefeed.DefaultMaxEntries per notification, so the entries in memory
// at once are bounded too.
func (f *follower) publishDiffs(ctx context.Context, prev *rlState, next string, until time.Time) error {
	from := f.seen.At
	if from.IsZero() || prev.At.After(from) {
		from = prev.At
	}
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet,
		MD: changefeed.MD{Capability: changefeed.CapChangeList, From: changefeed.NewDateTime(from), Until: changefeed.NewDateTime(until), Length: -1}}}
	if f.plan.CapabilityList != "" {
		doc.Links = []changefeed.Link{{Rel: "up", Href: f.plan.CapabilityList, Length: -1, Pri: -1}}
	}
	var entries []changefeed.Entry
	flush := func() error {
		fresh := changefeed.Fresh(entries, f.seen)
		entries = entries[:0]
		if len(fresh) == 0 {
			return nil
		}
		doc.MD.From = changefeed.NewDateTime(from)
		res, err := f.e.cfg.Hub.PublishFollowed(ctx, f.ch, hub.Followed{Doc: doc, Entries: fresh, From: from, Until: until})
		if err != nil {
			return fmt.Errorf("%s: %w", clip(f.plan.ResourceList), err)
		}
		f.seen, f.seq = changefeed.Advance(f.seen, fresh, until), res.Seq
		from = until
		f.counted(res)
		return nil
	}
	_, err := rldiff.Diff(prev.path, next, func(c rldiff.Change) error {
		entries = append(entries, diffEntry(c, until))
		if len(entries) < changefeed.DefaultMaxEntries {
			return nil
		}
		return flush()
	})
	if err != nil {
		return err
	}
	return flush()
}

// diffEntry is the notification entry of a change between two Resource
// Lists, seen at the newer list's time at: its datetime is at (when the
// hub saw the change, within the notification's window); a created or
// updated resource carries what the Resource List says of it, its lastmod,
// hash (md5, sha-256, … as given) and length, so a destination can check
// what it fetches (ResourceSync 1.1 §5). A hash a notification may not
// carry (one a lenient channel read: an unknown algorithm, a digest of the
// wrong size) is left out rather than refused with the whole diff. It is
// pure.
func diffEntry(c rldiff.Change, at time.Time) changefeed.Entry {
	md := &changefeed.MD{Change: c.Change, DateTime: changefeed.NewDateTime(at), Length: -1}
	e := changefeed.Entry{Loc: c.Loc, MD: md}
	if c.Change != changefeed.Deleted {
		md.Length = c.Length
		if _, err := changefeed.ParseHash(c.Hash, changefeed.Strict); err == nil {
			md.Hash = c.Hash
		}
		if !c.LastMod.IsZero() {
			e.LastMod = changefeed.NewDateTime(c.LastMod)
		}
	}
	return e
}

// resolve returns ref resolved against base.
func resolve(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}
