package dataset

import (
	"context"
	"fmt"
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
		err = im.importResourceList(ctx, ds.ResourceList, true)
	default:
		return fmt.Errorf("dataset: unknown import mode %q in the state file", im.st.Mode)
	}
	if err != nil {
		return err
	}
	return im.caughtUp(start, im.st.Patches-before, "update")
}
