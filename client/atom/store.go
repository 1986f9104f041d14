package atom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

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
// at the record's path.
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
	if c == nil {
		c = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, alts[0].Href, nil)
	if err != nil {
		return fmt.Errorf("atom: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("atom: GET %s: %w", alts[0].Href, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return d.Delete(ctx, id) // deleted since: a later entry says so
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("atom: GET %s: %s", alts[0].Href, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("atom: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".atom-*")
	if err != nil {
		return fmt.Errorf("atom: %w", err)
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("atom: write %s: %w", path, err)
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
