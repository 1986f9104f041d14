package dataset

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/rshub/rshub/changefeed"
)

// ErrMismatch is returned when a fetched resource does not have the
// length or hash its entry announces.
var ErrMismatch = errors.New("dataset: content does not match its entry's length or hash")

// download fetches loc into path (atomically: a temporary file in the same
// directory, synced, then renamed) and checks it against md's length and
// every hash it gives in a known algorithm (md5, sha-1, sha-256).
func download(ctx context.Context, client *http.Client, loc, path string, md *changefeed.MD) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("dataset: GET %s: %w", loc, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("dataset: GET %s: %s", loc, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rshub-tmp-*")
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	sums := map[string]hash.Hash{}
	want := map[string]string{}
	if md != nil && md.Hash != "" {
		ds, err := changefeed.ParseHash(md.Hash, changefeed.Lenient)
		if err != nil {
			return fmt.Errorf("dataset: %s: hash %q: %w", loc, md.Hash, err)
		}
		for _, d := range ds {
			alg := strings.ToLower(d.Alg)
			if h := changefeed.NewHash(alg); h != nil {
				sums[alg], want[alg] = h, strings.ToLower(d.Digest)
			}
		}
	}
	writers := []io.Writer{tmp}
	for _, h := range sums {
		writers = append(writers, h)
	}
	n, err := io.Copy(io.MultiWriter(writers...), resp.Body)
	if err != nil {
		return fmt.Errorf("dataset: GET %s: %w", loc, err)
	}
	if md != nil && md.Length >= 0 && n != md.Length {
		return fmt.Errorf("%w: %s has %d bytes, its entry says %d", ErrMismatch, loc, n, md.Length)
	}
	for alg, h := range sums {
		if got := hex.EncodeToString(h.Sum(nil)); got != want[alg] {
			return fmt.Errorf("%w: %s has %s %s, its entry says %s", ErrMismatch, loc, alg, got, want[alg])
		}
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}
