package atom

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
)

// DirStore mirrors each record's first alternate representation into a
// directory, at the path client/mirror gives its URI (host/path, or the
// path under Base); a deletion removes the file.
type DirStore struct {
	Dir    string
	Base   string       // optional: records under this URL map below it
	Client *http.Client // nil means http.DefaultClient
}

func (d *DirStore) path(id string) (string, error) {
	rel, err := mirror.MapPath(d.Base, id)
	if err != nil {
		return "", fmt.Errorf("atom: %w", err)
	}
	return filepath.Join(d.Dir, filepath.FromSlash(rel)), nil
}

// Put fetches the entry's first alternate link and writes it, atomically,
// at the record's path, unless the file there already has the length and
// hash the entry's rs:md announces. It is mirror mode's check
// (mirror.Download): a body that does not match rs:md is not written
// (mirror.ErrStale), and a 404 or 410 is an error (mirror.ErrGone), not a
// deletion: only a deletion entry deletes.
func (d *DirStore) Put(ctx context.Context, id string, e *Entry) error {
	alts := e.Alternates()
	if len(alts) == 0 {
		return fmt.Errorf("atom: %s has no alternate link", id)
	}
	path, err := d.path(id)
	if err != nil {
		return err
	}
	c := d.Client
	c = cmp.Or(c, http.DefaultClient)
	md := &changefeed.MD{Hash: e.Hash, Length: e.Length}
	if err := mirror.Download(ctx, c, alts[0].Href, path, md); err != nil {
		return fmt.Errorf("atom: GET %s: %w", alts[0].Href, err)
	}
	return nil
}

// Delete removes the record's file.
func (d *DirStore) Delete(_ context.Context, id string) error {
	path, err := d.path(id)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("atom: %w", err)
	}
	return nil
}
