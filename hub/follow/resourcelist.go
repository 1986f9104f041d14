package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

// Bounds of a followed Resource List: the sitemaps of its index and the
// resources of a snapshot (about 40 bytes each, so a snapshot stays under
// 100 MB; two are held while a diff is made).
const (
	maxSitemaps  = 1000
	maxResources = 2_000_000
)

// pollResourceList follows a Source that publishes only a Resource List (or
// a Resource List Index): it streams the list, sitemap after sitemap, into
// the next Snapshot, diffing it with the previous one as it goes, and
// publishes what was created, updated and deleted in between, each change
// at the list's time (its at, else the hub's clock), the notifications
// contiguous from the previous list's time. The first list read is the
// baseline: nothing to publish, and when the channel holds notifications
// from before (the hub restarted: the follower's Snapshot is gone) the next
// ones start at the baseline's time, a gap the hub records.
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
	b := NewSnapshotBuilder(f.rl, origin(u))
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
	next, diffs := b.Build(maxTime(at, f.seen.At))
	if prev != nil {
		if err := f.publishDiffs(ctx, prev, next, diffs); err != nil {
			return err
		}
	}
	f.rl = next
	f.fetch.keep(resp)
	f.mu.Lock()
	f.st.Resources = next.Len()
	f.mu.Unlock()
	return nil
}

func (f *follower) decodeOptions() changefeed.Options {
	mode := changefeed.Strict
	if f.ch.Lenient() {
		mode = changefeed.Lenient
	}
	return changefeed.Options{Mode: mode, MaxBytes: f.e.cfg.MaxBody}
}

// readSitemaps streams every sitemap an index names into b.
func (f *follower) readSitemaps(ctx context.Context, base string, idx *changefeed.Decoder, b *SnapshotBuilder) error {
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
func addAll(dec *changefeed.Decoder, u string, b *SnapshotBuilder) error {
	for {
		e, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", clip(u), err)
		}
		if b.Len() == maxResources {
			return fmt.Errorf("%s: the Resource List has more than %d resources", clip(u), maxResources)
		}
		e.Loc = resolve(u, e.Loc)
		b.Add(e)
	}
}

// publishDiffs publishes the changes between two Snapshots, at most
// changefeed.DefaultMaxEntries per notification (so the entries in memory
// at once are bounded too).
func (f *follower) publishDiffs(ctx context.Context, prev, next *Snapshot, diffs []Diff) error {
	from := f.seen.At
	if from.IsZero() || prev.At.After(from) {
		from = prev.At
	}
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet,
		MD: changefeed.MD{Capability: changefeed.CapChangeList, From: changefeed.NewDateTime(from), Until: changefeed.NewDateTime(next.At), Length: -1}}}
	if f.plan.CapabilityList != "" {
		doc.Links = []changefeed.Link{{Rel: "up", Href: f.plan.CapabilityList, Length: -1, Pri: -1}}
	}
	for start := 0; start < len(diffs); start += changefeed.DefaultMaxEntries {
		chunk := diffs[start:min(start+changefeed.DefaultMaxEntries, len(diffs))]
		entries := make([]changefeed.Entry, 0, len(chunk))
		for _, d := range chunk {
			entries = append(entries, changefeed.Entry{Loc: d.Loc(prev, next),
				MD: &changefeed.MD{Change: d.Change, DateTime: changefeed.NewDateTime(next.At), Length: -1}})
		}
		fresh := Fresh(entries, f.seen)
		if len(fresh) == 0 {
			continue
		}
		res, err := f.e.cfg.Hub.PublishFollowed(ctx, f.ch, hub.Followed{Doc: doc, Entries: fresh, From: from, Until: next.At})
		if err != nil {
			return fmt.Errorf("%s: %w", clip(f.plan.ResourceList), err)
		}
		f.seen, f.seq = Advance(f.seen, fresh, next.At), res.Seq
		from = next.At
		f.mu.Lock()
		f.st.Lists++
		if res.Gap != nil {
			f.st.Gaps++
			f.st.LastGap = res.Gap
		}
		f.mu.Unlock()
	}
	return nil
}

// origin is the scheme and host of u, with a slash: the prefix the
// locations of a Source's resources usually share.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ""
	}
	return p.Scheme + "://" + p.Host + "/"
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
