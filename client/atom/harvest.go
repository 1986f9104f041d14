package atom

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// MaxDocuments bounds the archive documents one Harvest follows, against
// a prev-archive chain that loops or never ends.
const MaxDocuments = 1 << 20

// Store receives the changes a Harvester applies.
type Store interface {
	// Put creates or updates the record id from its active entry e.
	Put(ctx context.Context, id string, e *Entry) error
	// Delete removes the record id; a record the store does not hold is
	// not an error.
	Delete(ctx context.Context, id string) error
}

// Record is what the State keeps of one record: its last change applied,
// or, when Pending, the change the last Harvest could not apply (its
// resource answered 404 or an error, or did not match rs:md), which the
// next Harvest retries.
type Record struct {
	Updated time.Time `json:"updated"`
	Deleted bool      `json:"deleted,omitempty"`
	Hash    string    `json:"hash,omitempty"`
	Href    string    `json:"href,omitempty"` // the first alternate link
	Length  int64     `json:"length,omitempty"`
	Pending bool      `json:"pending,omitempty"`
}

// sameChange reports whether r and o record the same change.
func (r Record) sameChange(o Record) bool {
	return r.Updated.Equal(o.Updated) && r.Deleted == o.Deleted && r.Hash == o.Hash && r.Href == o.Href
}

// entry rebuilds the active entry a pending record stands for.
func (r Record) entry(id string) Entry {
	return Entry{ID: id, Updated: r.Updated, Links: []Link{{Href: r.Href}}, Hash: r.Hash, Length: r.Length}
}

// State is what a Harvester has applied: the newest archive document
// (immutable, so never read again) and the last change of every record.
type State struct {
	Archive string            `json:"archive,omitempty"`
	Records map[string]Record `json:"records"`
}

// Live returns the identifiers of the records that are not deleted.
func (s State) Live() []string {
	var out []string
	for id, r := range s.Records {
		if !r.Deleted {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Config configures a Harvester.
type Config struct {
	// Feed is the URL of the subscription document.
	Feed string
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Logger receives progress; nil means slog.Default().
	Logger *slog.Logger
}

// Stats says what one Harvest did.
type Stats struct {
	Documents int // feed documents fetched
	Put       int // records created or updated
	Deleted   int // records deleted
	Skipped   int // historical entries, or entries already applied
	// Failed counts the active entries whose resource could not be
	// stored (404 or 410, another error, a body that does not match
	// rs:md): they stay pending in the State and the next Harvest retries
	// them.
	Failed int
}

// Harvester harvests one Atom-PMH feed into a Store. It is not safe for
// concurrent use.
type Harvester struct {
	cfg    Config
	st     State
	logger *slog.Logger
}

// New returns a Harvester for cfg that resumes from st (the zero State
// harvests the whole logical feed).
func New(cfg Config, st State) (*Harvester, error) {
	if cfg.Feed == "" {
		return nil, errors.New("atom: no feed URL")
	}
	cfg.Client = cmp.Or(cfg.Client, http.DefaultClient)
	lg := cfg.Logger
	lg = cmp.Or(lg, slog.Default())
	if st.Records == nil {
		st.Records = map[string]Record{}
	}
	return &Harvester{cfg: cfg, st: st, logger: lg.With("component", "atom", "feed", cfg.Feed)}, nil
}

// State returns what has been applied (a copy); save it to resume.
func (h *Harvester) State() State {
	st := State{Archive: h.st.Archive, Records: make(map[string]Record, len(h.st.Records))}
	for k, v := range h.st.Records {
		st.Records[k] = v
	}
	return st
}

// Harvest reads the feed from the subscription document back to the
// newest archive already applied and applies what changed to store: only
// the newest entry of each record (the documents' history is collapsed
// before anything is fetched), and the pending records of the last Harvest
// that no newer entry replaces. An active entry the store cannot put is
// counted in Stats.Failed and kept pending; any other error stops the
// Harvest, and the next one goes on from what the State records.
func (h *Harvester) Harvest(ctx context.Context, store Store) (Stats, error) {
	var stats Stats
	sub, err := h.fetch(ctx, h.cfg.Feed)
	if err != nil {
		return stats, err
	}
	stats.Documents++
	chain := []*Feed{sub} // newest first
	seen := map[string]bool{h.cfg.Feed: true}
	for u := sub.Link("prev-archive"); u != "" && u != h.st.Archive; u = chain[len(chain)-1].Link("prev-archive") {
		if seen[u] || len(chain) > MaxDocuments {
			return stats, fmt.Errorf("atom: prev-archive chain loops or is too long at %s", u)
		}
		seen[u] = true
		f, err := h.fetch(ctx, u)
		if err != nil {
			return stats, err
		}
		stats.Documents++
		chain = append(chain, f)
	}
	es := h.changes(chain, &stats)
	for i := range es {
		if err := h.apply(ctx, store, &es[i], &stats); err != nil {
			return stats, err
		}
	}
	if len(chain) > 1 { // every archive up to the newest one applied
		h.st.Archive = sub.Link("prev-archive")
	}
	if sub.Complete {
		if err := h.complete(ctx, store, sub, &stats); err != nil {
			return stats, err
		}
	}
	h.logger.Debug("harvested", "documents", stats.Documents, "put", stats.Put, "deleted", stats.Deleted, "skipped", stats.Skipped, "failed", stats.Failed)
	return stats, nil
}

// changes lists what to apply: the pending records, then the entries of
// chain (newest document first), oldest first (documents list entries
// newest first; among equal times the document's order is reversed), with
// only the newest change of each record kept; the others are counted as
// skipped.
func (h *Harvester) changes(chain []*Feed, stats *Stats) []Entry {
	var all []Entry
	for id, r := range h.st.Records {
		if r.Pending {
			all = append(all, r.entry(id))
		}
	}
	slices.SortFunc(all, func(a, b Entry) int { return strings.Compare(a.ID, b.ID) })
	pending := len(all)
	for i := len(chain) - 1; i >= 0; i-- {
		es := slices.Clone(chain[i].Entries)
		slices.Reverse(es)
		slices.SortStableFunc(es, func(a, b Entry) int { return a.Updated.Compare(b.Updated) })
		all = append(all, es...)
	}
	newest := map[string]int{}
	for i, e := range all {
		if j, ok := newest[e.ID]; !ok || !e.Updated.Before(all[j].Updated) {
			newest[e.ID] = i
		}
	}
	out := make([]Entry, 0, len(newest))
	for i, e := range all {
		if newest[e.ID] == i {
			out = append(out, e)
		} else if i >= pending {
			stats.Skipped++
		}
	}
	return out
}

// apply applies one entry unless the State has a later change of its
// record, or this very change applied. An active entry the store cannot
// put is recorded pending.
func (h *Harvester) apply(ctx context.Context, store Store, e *Entry, stats *Stats) error {
	del := e.IsDeletion()
	alts := e.Alternates()
	if !del && len(alts) == 0 {
		h.logger.Warn("entry is neither active nor a deletion entry, skipped", "id", e.ID)
		stats.Skipped++
		return nil
	}
	rec := Record{Updated: e.Updated, Deleted: del, Hash: e.Hash}
	if !del {
		rec.Href, rec.Length = alts[0].Href, e.Length
	}
	if old, ok := h.st.Records[e.ID]; ok && (e.Updated.Before(old.Updated) || !old.Pending && old.sameChange(rec)) {
		stats.Skipped++
		return nil
	}
	if del {
		if err := store.Delete(ctx, e.ID); err != nil {
			return fmt.Errorf("atom: delete %s: %w", e.ID, err)
		}
		stats.Deleted++
	} else if err := store.Put(ctx, e.ID, e); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		h.logger.Warn("resource not stored; retried at the next harvest", "id", e.ID, "href", rec.Href, "err", err)
		rec.Pending = true
		stats.Failed++
	} else {
		stats.Put++
	}
	h.st.Records[e.ID] = rec
	return nil
}

// complete deletes the records a complete subscription document does not
// list (Atom-PMH's second deletion option).
func (h *Harvester) complete(ctx context.Context, store Store, sub *Feed, stats *Stats) error {
	listed := map[string]bool{}
	for _, e := range sub.Entries {
		listed[e.ID] = true
	}
	for _, id := range h.st.Live() {
		if listed[id] {
			continue
		}
		if err := store.Delete(ctx, id); err != nil {
			return fmt.Errorf("atom: delete %s: %w", id, err)
		}
		r := h.st.Records[id]
		r.Deleted, r.Href, r.Hash, r.Length, r.Pending = true, "", "", 0, false
		h.st.Records[id] = r
		stats.Deleted++
	}
	return nil
}

// fetch GETs and parses one feed document.
func (h *Harvester) fetch(ctx context.Context, u string) (*Feed, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("atom: %w", err)
	}
	req.Header.Set("Accept", "application/atom+xml, application/xml;q=0.9")
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("atom: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("atom: GET %s: %s", u, resp.Status)
	}
	f, err := Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("atom: GET %s: %w", u, err)
	}
	return f, nil
}
