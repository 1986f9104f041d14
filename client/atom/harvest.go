package atom

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
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

// Record is what the State keeps of one record: its last change applied.
type Record struct {
	Updated time.Time `json:"updated"`
	Deleted bool      `json:"deleted,omitempty"`
	Hash    string    `json:"hash,omitempty"`
	Href    string    `json:"href,omitempty"` // the first alternate link
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
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
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
// newest archive already applied and applies what changed to store. On an
// error, what was applied stays applied and recorded in the State; the
// next Harvest goes on from there.
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
	for i := len(chain) - 1; i >= 0; i-- {
		if err := h.applyDoc(ctx, store, chain[i], &stats); err != nil {
			return stats, err
		}
		if i == 1 { // every archive up to the newest one applied
			h.st.Archive = sub.Link("prev-archive")
		}
	}
	if sub.Complete {
		if err := h.complete(ctx, store, sub, &stats); err != nil {
			return stats, err
		}
	}
	h.logger.Debug("harvested", "documents", stats.Documents, "put", stats.Put, "deleted", stats.Deleted, "skipped", stats.Skipped)
	return stats, nil
}

// applyDoc applies a document's entries, oldest first (documents list
// them newest first; among equal times the document's order is reversed).
func (h *Harvester) applyDoc(ctx context.Context, store Store, f *Feed, stats *Stats) error {
	es := slices.Clone(f.Entries)
	slices.Reverse(es)
	slices.SortStableFunc(es, func(a, b Entry) int { return a.Updated.Compare(b.Updated) })
	for i := range es {
		if err := h.apply(ctx, store, &es[i], stats); err != nil {
			return err
		}
	}
	return nil
}

// apply applies one entry unless the State has a later change of its
// record, or this very change.
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
		rec.Href = alts[0].Href
	}
	if old, ok := h.st.Records[e.ID]; ok && (e.Updated.Before(old.Updated) || e.Updated.Equal(old.Updated) && old == rec) {
		stats.Skipped++
		return nil
	}
	if del {
		if err := store.Delete(ctx, e.ID); err != nil {
			return fmt.Errorf("atom: delete %s: %w", e.ID, err)
		}
		stats.Deleted++
	} else {
		if err := store.Put(ctx, e.ID, e); err != nil {
			return fmt.Errorf("atom: put %s: %w", e.ID, err)
		}
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
		r.Deleted, r.Href, r.Hash = true, "", ""
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
