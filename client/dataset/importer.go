package dataset

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/rshub/rshub/client/mirror"
)

// Import modes.
const (
	ModeChangeList   = "changelist"   // built from the Change List's patches
	ModeResourceList = "resourcelist" // loaded from the Resource List's dataset file
)

// Files of an importer's directory.
const (
	SnapshotFile    = "dataset.nq"        // the store as sorted canonical N-Quads
	JournalFile     = "journal.nqud"      // patches applied since the snapshot
	StateFile       = "state.json"        // State
	FollowStateFile = "follow-state.json" // the client/mirror state of the follower
	PatchDir        = "patches"           // fetched patches and files, by host/path
)

// Config configures an Importer.
type Config struct {
	Dir     string  // where the dataset and its state live (created)
	Dataset Dataset // from Discover; CapabilityList is required
	// DataSetFile names the dataset file of a Resource List with several
	// files (its loc, or the last part of its path); Timbuctoo's
	// "dataSetFile" parameter.
	DataSetFile string
	Client      *http.Client       // default: 60 s timeout
	Logger      *slog.Logger       // default: discard
	Events      func(mirror.Event) // optional: progress, files, patches
	// SnapshotEvery is how many patches pass between snapshots of the
	// store (the journal holds the ones since); default 1000.
	SnapshotEvery int
	Now           func() time.Time
}

// State is what an Importer keeps in its state file.
type State struct {
	CapabilityList string    `json:"capabilityList"`
	Title          string    `json:"title,omitempty"`
	Description    string    `json:"description,omitempty"`
	Mode           string    `json:"mode,omitempty"`
	DataSetFile    string    `json:"dataSetFile,omitempty"` // loc of the loaded file (ModeResourceList)
	Imported       bool      `json:"imported,omitempty"`    // the initial import is complete
	Until          time.Time `json:"until,omitzero"`        // Source time the import reached
	// Applied names (paths under PatchDir) the patches the snapshot holds.
	Applied []string `json:"applied,omitempty"`
	// Patches counts the patches applied, LastPatch is the latest.
	Patches   int       `json:"patches"`
	LastPatch string    `json:"lastPatch,omitempty"`
	LastApply time.Time `json:"lastApply,omitzero"`
}

// Importer keeps one dataset in a directory: a quad store restored from
// its snapshot and journal, the patches fetched so far, and its state. Its
// methods are safe for concurrent use.
type Importer struct {
	cfg     Config
	mu      sync.Mutex
	st      State
	store   Store
	applied map[string]bool // patches in the snapshot or the journal
	journal *journal
	since   int // patches since the snapshot
}

// Open restores an importer from cfg.Dir (or starts an empty one). A
// directory made for another Capability List is refused.
func Open(cfg Config) (*Importer, error) {
	if cfg.Dir == "" || cfg.Dataset.CapabilityList == "" {
		return nil, errors.New("dataset: Config.Dir and Config.Dataset.CapabilityList are required")
	}
	cfg.Client = cmp.Or(cfg.Client, &http.Client{Timeout: 60 * time.Second})
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = 1000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, PatchDir), 0o755); err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	im := &Importer{cfg: cfg, applied: map[string]bool{}}
	raw, err := os.ReadFile(im.path(StateFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("dataset: state: %w", err)
	default:
		if err := json.Unmarshal(raw, &im.st); err != nil {
			return nil, fmt.Errorf("dataset: state file %s: %w", im.path(StateFile), err)
		}
	}
	if im.st.CapabilityList != "" && im.st.CapabilityList != cfg.Dataset.CapabilityList {
		return nil, fmt.Errorf("dataset: %s holds the dataset of %s, not %s", cfg.Dir, im.st.CapabilityList, cfg.Dataset.CapabilityList)
	}
	im.st.CapabilityList = cfg.Dataset.CapabilityList
	if cfg.Dataset.Title != "" || im.st.Title == "" {
		im.st.Title, im.st.Description = cfg.Dataset.Title, cfg.Dataset.Description
	}
	for _, a := range im.st.Applied {
		im.applied[a] = true
	}
	if f, err := os.Open(im.path(SnapshotFile)); err == nil {
		err = im.store.Load(bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("dataset: snapshot: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("dataset: snapshot: %w", err)
	}
	im.journal, err = openJournal(im.path(JournalFile), func(name string, changes []Change) {
		for _, c := range changes {
			im.store.Apply(c)
		}
		im.applied[name] = true
		im.since++
	})
	if err != nil {
		return nil, err
	}
	if err := im.dropUnapplied(); err != nil {
		im.journal.close()
		return nil, err
	}
	if err := im.saveState(); err != nil {
		im.journal.close()
		return nil, err
	}
	return im, nil
}

func (im *Importer) path(name string) string { return filepath.Join(im.cfg.Dir, name) }

// dropUnapplied removes fetched patches that were never applied (a crash
// between fetching and applying), so the follower fetches them again.
func (im *Importer) dropUnapplied() error {
	root := im.path(PatchDir)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if MediaType(rel, "") == MediaTypePatch && !im.applied[rel] {
			im.cfg.Logger.Info("removing a fetched patch that was not applied", "patch", rel)
			return os.Remove(p)
		}
		return nil
	})
}

// State returns a copy of the importer's state.
func (im *Importer) State() State {
	im.mu.Lock()
	defer im.mu.Unlock()
	st := im.st
	st.Applied = nil
	return st
}

// Len returns how many quads the dataset holds.
func (im *Importer) Len() int {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.store.Len()
}

// Export writes the dataset as sorted canonical N-Quads.
func (im *Importer) Export(w io.Writer) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.store.Export(w)
}

// Close snapshots the store and closes the journal.
func (im *Importer) Close() error {
	im.mu.Lock()
	defer im.mu.Unlock()
	err := im.snapshot()
	return errors.Join(err, im.journal.close())
}

func (im *Importer) emit(e mirror.Event) {
	if im.cfg.Events == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = im.cfg.Now()
	}
	im.cfg.Events(e)
}

// applyPatchFile applies the fetched patch at name (its path under
// PatchDir) unless it was applied already; the whole patch is read first,
// so a malformed one changes nothing. Called with mu held.
func (im *Importer) applyPatchFile(name, loc string) error {
	if im.applied[name] {
		im.emit(mirror.Event{Kind: mirror.EventDuplicate, Loc: loc, Path: name, Message: "patch already applied"})
		return nil
	}
	f, err := os.Open(filepath.Join(im.path(PatchDir), filepath.FromSlash(name)))
	if err != nil {
		return fmt.Errorf("dataset: patch %s: %w", loc, err)
	}
	defer f.Close()
	var changes []Change
	if err := ReadPatch(bufio.NewReaderSize(f, 256<<10), func(c Change) error { changes = append(changes, c); return nil }); err != nil {
		return fmt.Errorf("dataset: patch %s: %w", loc, err)
	}
	if err := im.journal.append(name, changes); err != nil {
		return err
	}
	for _, c := range changes {
		im.store.Apply(c)
	}
	im.applied[name] = true
	im.since++
	im.st.Patches++
	im.st.LastPatch, im.st.LastApply = loc, im.cfg.Now()
	im.emit(mirror.Event{Kind: EventPatch, Loc: loc, Path: name, Entries: len(changes), Total: im.store.Len()})
	if im.since >= im.cfg.SnapshotEvery || im.journal.size > 64<<20 {
		return im.snapshot()
	}
	return nil
}

// EventPatch is the mirror.Event kind of an applied patch (Entries: its
// changes; Total: the quads the dataset then holds).
const EventPatch = "patch"

// snapshot writes the store as sorted N-Quads, records the applied
// patches in the state file, then empties the journal. Called with mu held.
func (im *Importer) snapshot() error {
	tmp, err := os.CreateTemp(im.cfg.Dir, ".rshub-tmp-*")
	if err != nil {
		return fmt.Errorf("dataset: snapshot: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := im.store.Export(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("dataset: snapshot: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("dataset: snapshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), im.path(SnapshotFile)); err != nil {
		return fmt.Errorf("dataset: snapshot: %w", err)
	}
	im.st.Applied = im.st.Applied[:0]
	for name := range im.applied {
		im.st.Applied = append(im.st.Applied, name)
	}
	slices.Sort(im.st.Applied)
	if err := im.saveState(); err != nil {
		return err
	}
	im.since = 0
	return im.journal.reset()
}

// saveState replaces the state file atomically. Called with mu held.
func (im *Importer) saveState() error {
	raw, err := json.MarshalIndent(im.st, "", "  ")
	if err != nil {
		return fmt.Errorf("dataset: state: %w", err)
	}
	tmp := im.path(StateFile + ".tmp")
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("dataset: state: %w", err)
	}
	if err := os.Rename(tmp, im.path(StateFile)); err != nil {
		return fmt.Errorf("dataset: state: %w", err)
	}
	return nil
}
