package source

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// racyWindow: a file modified this close to a scan is hashed again at the
// next scan even if its size and mtime did not change (a write in the same
// clock tick as the last scan would otherwise go unseen).
const racyWindow = 2 * time.Second

// file is what the Source knows of one file.
type file struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	MD5     string    `json:"md5"`
	SHA256  string    `json:"sha256"`
	Scanned time.Time `json:"scanned"`
}

// hash is the rs:md hash attribute value.
func (f file) hash() string { return "md5:" + f.MD5 + " sha-256:" + f.SHA256 }

// scanDir walks dir and returns every regular file by slash path, hashing
// the ones that may have changed since prev.
func scanDir(dir string, prev map[string]file, now time.Time) (map[string]file, error) {
	out := map[string]file{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		old, ok := prev[rel]
		if ok && old.Size == info.Size() && old.ModTime.Equal(info.ModTime()) && old.Scanned.Sub(info.ModTime()) > racyWindow {
			out[rel] = old
			return nil
		}
		f, err := hashFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		f.ModTime, f.Scanned = info.ModTime(), now
		out[rel] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("source: scan %s: %w", dir, err)
	}
	return out, nil
}

// hashFile reads a file once for its size, md5 and sha-256.
func hashFile(p string) (file, error) {
	fh, err := os.Open(p)
	if err != nil {
		return file{}, err
	}
	defer fh.Close()
	m, s := md5.New(), sha256.New()
	n, err := io.Copy(io.MultiWriter(m, s), fh)
	if err != nil {
		return file{}, err
	}
	return file{Size: n, MD5: hex.EncodeToString(m.Sum(nil)), SHA256: hex.EncodeToString(s.Sum(nil))}, nil
}

// loadSnapshot reads the files announced so far; missing means none.
func loadSnapshot(path string) (map[string]file, error) {
	snap := map[string]file{}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return snap, nil
	}
	if err != nil {
		return nil, fmt.Errorf("source: state: %w", err)
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		return nil, fmt.Errorf("source: state %s: %w", path, err)
	}
	return snap, nil
}

// saveSnapshot replaces the state file atomically.
func saveSnapshot(path string, snap map[string]file) error {
	raw, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return fmt.Errorf("source: state: %w", err)
	}
	return os.Rename(tmp, path)
}

// pathEscape escapes one path segment.
func pathEscape(s string) string { return strings.ReplaceAll(url.PathEscape(s), ":", "%3A") }
