package dataset

import (
	"context"
	"fmt"

	"github.com/rshub/rshub/client/mirror"
)

// Update brings the dataset up to the Source's lists by pulling, with no
// hub: the initial import when it is not done; otherwise, in
// ModeChangeList, every patch of the Change List not applied yet, in
// order, and in ModeResourceList the dataset file again when the Resource
// List is newer than the copy held. It is what a scheduled sync runs
// (`subscriber --dataset DIR --no-follow`): each run moves the copy to the
// Source's state.
func (im *Importer) Update(ctx context.Context) error {
	im.mu.Lock()
	imported := im.st.Imported
	im.mu.Unlock()
	if !imported {
		return im.Import(ctx)
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	ds := im.cfg.Dataset
	start, before := im.cfg.Now(), im.st.Patches
	var err error
	switch im.st.Mode {
	case ModeChangeList:
		if ds.ChangeList == "" {
			return fmt.Errorf("dataset: %s was imported from a Change List, and its Capability List lists none now", ds.CapabilityList)
		}
		err = im.importChangeList(ctx, ds.ChangeList)
	case ModeResourceList:
		if ds.ResourceList == "" {
			return fmt.Errorf("dataset: %s was imported from a Resource List, and its Capability List lists none now", ds.CapabilityList)
		}
		err = im.updateResourceList(ctx, ds.ResourceList)
	default:
		return fmt.Errorf("dataset: unknown import mode %q in the state file", im.st.Mode)
	}
	if err != nil {
		return err
	}
	if err := im.snapshot(); err != nil {
		return err
	}
	im.emit(mirror.Event{Kind: mirror.EventCaughtUp, Until: im.st.Until, Entries: im.st.Patches - before, Total: im.store.Len(), Elapsed: im.cfg.Now().Sub(start), Message: "update (" + im.st.Mode + ")"})
	return nil
}

// updateResourceList loads the dataset file again when the Resource List
// is newer than the one loaded, or names another file. Called with mu held.
func (im *Importer) updateResourceList(ctx context.Context, loc string) error {
	entries, at, err := im.listEntries(ctx, loc)
	if err != nil {
		return fmt.Errorf("dataset: Resource List: %w", err)
	}
	e, err := pickDataSetFile(loc, entries, im.cfg.DataSetFile)
	if err != nil {
		return err
	}
	if e.Loc == im.st.DataSetFile && !later(at, entryTime(&e)).After(im.st.Until) {
		return nil // the copy held is the Source's
	}
	if err := im.loadFile(ctx, e.Loc, entryType(&e), e.MD); err != nil {
		return err
	}
	im.st.DataSetFile, im.st.Until = e.Loc, later(at, entryTime(&e))
	return nil
}
