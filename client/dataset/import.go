package dataset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
)

// CandidatesError is returned when a Resource List holds several files and
// none is marked as the dataset nor named by Config.DataSetFile: choose
// one of Files.
type CandidatesError struct {
	ResourceList string
	Files        []string
}

func (e *CandidatesError) Error() string {
	return fmt.Sprintf("dataset: the Resource List %s has %d files and none is marked as the dataset (isDataSet) or named by the dataset-file option; candidates: %s",
		e.ResourceList, len(e.Files), strings.Join(e.Files, ", "))
}

// Import makes the initial import, unless it is done: with a Change List,
// every patch it names (created or updated, .nqud or typed as a patch),
// in forward chronological order, each fetched, checked against its
// length and hash and applied; without one, the dataset file of the
// Resource List. An interrupted import resumes where it stopped.
func (im *Importer) Import(ctx context.Context) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.st.Imported {
		return nil
	}
	ds := im.cfg.Dataset
	start := im.cfg.Now()
	var err error
	switch {
	case ds.ChangeList != "":
		im.st.Mode = ModeChangeList
		err = im.importChangeList(ctx, ds.ChangeList)
	case ds.ResourceList != "":
		im.st.Mode = ModeResourceList
		err = im.importResourceList(ctx, ds.ResourceList, false)
	default:
		err = fmt.Errorf("dataset: the Capability List %s lists neither a Change List nor a Resource List", ds.CapabilityList)
	}
	if err != nil {
		return err
	}
	im.st.Imported = true
	return im.caughtUp(start, im.st.Patches, "import")
}

// caughtUp snapshots the store after an import or update that began at
// start and applied patches, and reports it. Called with mu held.
func (im *Importer) caughtUp(start time.Time, patches int, what string) error {
	if err := im.snapshot(); err != nil {
		return err
	}
	im.emit(mirror.Event{Kind: mirror.EventCaughtUp, Until: im.st.Until, Entries: patches, Total: im.store.Len(), Elapsed: im.cfg.Now().Sub(start), Message: what + " (" + im.st.Mode + ")"})
	return nil
}

// listEntries reads a list, or every list of a list index.
func (im *Importer) listEntries(ctx context.Context, loc string) ([]changefeed.Entry, time.Time, error) {
	_, doc, err := getList(ctx, im.cfg.Client, loc)
	if err != nil {
		return nil, time.Time{}, err
	}
	until := later(doc.MD.Until.Time, doc.MD.At.Time)
	if doc.Kind != changefeed.SitemapIndex {
		return doc.Entries, until, nil
	}
	var out []changefeed.Entry
	for _, e := range doc.Entries {
		part, u, err := im.listEntries(ctx, e.Loc)
		if err != nil {
			return nil, time.Time{}, err
		}
		out = append(out, part...)
		until = later(until, u)
	}
	return out, until, nil
}

func later(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}

func entryType(e *changefeed.Entry) string {
	if e.MD != nil {
		return e.MD.Type
	}
	return ""
}

// importChangeList applies every patch of the Change List in order.
func (im *Importer) importChangeList(ctx context.Context, loc string) error {
	entries, until, err := im.listEntries(ctx, loc)
	if err != nil {
		return fmt.Errorf("dataset: Change List: %w", err)
	}
	var patches []changefeed.Entry
	for _, e := range entries {
		if MediaType(e.Loc, entryType(&e)) != MediaTypePatch || (e.MD != nil && e.MD.Change == changefeed.Deleted) {
			continue
		}
		patches = append(patches, e)
		until = later(until, changefeed.EntryTime(e))
	}
	sort.SliceStable(patches, func(i, j int) bool { return changefeed.EntryTime(patches[i]).Before(changefeed.EntryTime(patches[j])) })
	im.emit(mirror.Event{Kind: mirror.EventBaseline, Loc: loc, Total: len(patches), Message: "applying the Change List's patches"})
	for i := range patches {
		e := &patches[i]
		name, err := mirror.MapPath("", e.Loc)
		if err != nil {
			return fmt.Errorf("dataset: patch %s: %w", e.Loc, err)
		}
		if !im.applied[name] {
			if err := download(ctx, im.cfg.Client, e.Loc, filepath.Join(im.path(PatchDir), filepath.FromSlash(name)), e.MD); err != nil {
				return err
			}
			if err := im.applyPatchFile(name, e.Loc); err != nil {
				return err
			}
		}
		if (i+1)%100 == 0 || i+1 == len(patches) {
			im.emit(mirror.Event{Kind: mirror.EventProgress, Done: i + 1, Total: len(patches), Message: "patches"})
		}
	}
	im.st.Until = until
	return nil
}

// importResourceList loads the dataset file of the Resource List; with
// update, only when the list is newer than the copy held or names another
// file.
func (im *Importer) importResourceList(ctx context.Context, loc string, update bool) error {
	entries, at, err := im.listEntries(ctx, loc)
	if err != nil {
		return fmt.Errorf("dataset: Resource List: %w", err)
	}
	e, err := pickDataSetFile(loc, entries, im.cfg.DataSetFile)
	if err != nil {
		return err
	}
	at = later(at, changefeed.EntryTime(e))
	if update && e.Loc == im.st.DataSetFile && !at.After(im.st.Until) {
		return nil // the copy held is the Source's
	}
	im.emit(mirror.Event{Kind: mirror.EventBaseline, Loc: e.Loc, Message: "loading the Resource List's dataset file"})
	if err := im.loadFile(ctx, e.Loc, entryType(&e), e.MD); err != nil {
		return err
	}
	im.st.DataSetFile, im.st.Until = e.Loc, at
	return nil
}

// pickDataSetFile chooses the dataset file of a Resource List: the one
// named, else the only one, else the one marked isDataSet="true".
func pickDataSetFile(list string, entries []changefeed.Entry, named string) (changefeed.Entry, error) {
	if named != "" {
		for _, e := range entries {
			if e.Loc == named || path.Base(e.Loc) == named {
				return e, nil
			}
		}
	}
	if named == "" && len(entries) == 1 {
		return entries[0], nil
	}
	if named == "" {
		for _, e := range entries {
			if isDataSet(&e) {
				return e, nil
			}
		}
	}
	ce := &CandidatesError{ResourceList: list}
	for _, e := range entries {
		ce.Files = append(ce.Files, e.Loc)
	}
	if named != "" {
		return changefeed.Entry{}, fmt.Errorf("dataset: no file %q in the Resource List: %w", named, ce)
	}
	return changefeed.Entry{}, ce
}

// isDataSet reports whether an entry's rs:md carries isDataSet="true"
// (in any namespace), the seed's marker of the dataset file.
func isDataSet(e *changefeed.Entry) bool {
	if e.MD == nil {
		return false
	}
	for _, a := range e.MD.Ext {
		if strings.EqualFold(a.Name.Local, "isDataSet") && strings.EqualFold(strings.TrimSpace(a.Value), "true") {
			return true
		}
	}
	return false
}

// loadFile fetches an RDF file and replaces the store with its quads.
// Called with mu held.
func (im *Importer) loadFile(ctx context.Context, loc, declared string, md *changefeed.MD) error {
	name, err := mirror.MapPath("", loc)
	if err != nil {
		return fmt.Errorf("dataset: %s: %w", loc, err)
	}
	p := filepath.Join(im.path(PatchDir), filepath.FromSlash(name))
	if err := download(ctx, im.cfg.Client, loc, p, md); err != nil {
		return err
	}
	return im.reloadFrom(p, loc, declared)
}

// reloadFrom replaces the store with the quads of a local RDF file.
func (im *Importer) reloadFrom(p, loc, declared string) error {
	mt := MediaType(loc, declared)
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	var fresh Store
	if err := ParseRDF(bufio.NewReaderSize(f, 1<<20), mt, loc, func(q Quad) error { fresh.Add(q); return nil }); err != nil {
		return fmt.Errorf("dataset: %s: %w", loc, err)
	}
	im.store = fresh
	if err := im.snapshot(); err != nil {
		return errors.Join(fmt.Errorf("dataset: %s loaded but not saved", loc), err)
	}
	im.emit(mirror.Event{Kind: mirror.EventFile, Loc: loc, Total: fresh.Len(), Message: "dataset file loaded (" + mt + ")"})
	return nil
}
