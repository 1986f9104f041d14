package mirror

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/rshub/rshub/changefeed"
)

// ErrStale says a fetched resource does not match the length or hash its
// entry announces: it changed again since (a later change announces that),
// or it was altered on the way.
var ErrStale = errors.New("resource does not match its announced length or hash")

// ErrGone says the resource no longer exists at the Source (404 or 410).
var ErrGone = errors.New("resource gone")

// Download fetches loc into path atomically, unless the file at path
// already has the length and hash md announces. A body that does not match
// md is not written: the error wraps ErrStale. A 404 or 410 wraps ErrGone;
// any other error is a failure worth retrying. It is the check mirror mode
// applies to every entry, offered to the other harvesters of this module.
func Download(ctx context.Context, client *http.Client, loc, path string, md *changefeed.MD) error {
	e := expectOf(md)
	if localMatches(path, e) {
		return nil
	}
	return download(ctx, client, loc, path, e)
}

// expect is what an entry announces about a resource's content.
type expect struct {
	length int64             // -1 when absent
	hashes map[string]string // algorithm -> lower-case hex, known algorithms only
}

// expectOf reads an entry's length and hash attribute.
func expectOf(md *changefeed.MD) expect {
	e := expect{length: -1, hashes: map[string]string{}}
	if md == nil {
		return e
	}
	e.length = md.Length
	if md.Hash != "" {
		if ds, err := changefeed.ParseHash(md.Hash, changefeed.Lenient); err == nil {
			for _, d := range ds {
				alg := strings.ToLower(d.Alg)
				if changefeed.NewHash(alg) != nil {
					e.hashes[alg] = strings.ToLower(d.Digest)
				}
			}
		}
	}
	return e
}

// checkable reports whether e says enough to recognise the content.
func (e expect) checkable() bool { return len(e.hashes) > 0 }

// digester computes every expected hash of a stream.
type digester struct {
	n    int64
	sums map[string]hash.Hash
}

func newDigester(e expect) *digester {
	d := &digester{sums: map[string]hash.Hash{}}
	for alg := range e.hashes {
		d.sums[alg] = changefeed.NewHash(alg)
	}
	return d
}

func (d *digester) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	for _, h := range d.sums {
		h.Write(p)
	}
	return len(p), nil
}

// mismatch names the first property that differs from e, or "".
func (d *digester) mismatch(e expect) string {
	if e.length >= 0 && d.n != e.length {
		return fmt.Sprintf("length %d, announced %d", d.n, e.length)
	}
	for alg, want := range e.hashes {
		if got := hex.EncodeToString(d.sums[alg].Sum(nil)); got != want {
			return fmt.Sprintf("%s %s, announced %s", alg, got, want)
		}
	}
	return ""
}

// localMatches reports whether the file at path already has e's length and
// hashes (only when e has a hash to compare).
func localMatches(path string, e expect) bool {
	if !e.checkable() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || (e.length >= 0 && st.Size() != e.length) {
		return false
	}
	d := newDigester(e)
	if _, err := io.Copy(d, f); err != nil {
		return false
	}
	return d.mismatch(e) == ""
}

// download GETs loc into path atomically, checking e. It returns ErrGone
// for 404 and 410, ErrStale when the content does not match e, and other
// errors for failures worth retrying.
func download(ctx context.Context, client *http.Client, loc, path string, e expect) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrGone, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return ErrGone
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("GET %s: %s", loc, resp.Status)
	}
	if err := makeParent(path); err != nil {
		return err
	}
	d := newDigester(e)
	var bad string
	err = writeAtomic(path, func(f *os.File) error {
		if _, err := io.Copy(io.MultiWriter(f, d), resp.Body); err != nil {
			return fmt.Errorf("GET %s: %w", loc, err)
		}
		if bad = d.mismatch(e); bad != "" {
			return ErrStale
		}
		return nil
	}, 0o644)
	if errors.Is(err, ErrStale) {
		return fmt.Errorf("%w: %s", ErrStale, bad)
	}
	return err
}

// makeParent creates path's directory, replacing a file that stands where
// a directory must be (the Source replaced a file by a directory).
func makeParent(path string) error {
	dir := filepath.Dir(path)
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		return nil
	}
	for p := dir; p != "." && p != "/"; p = filepath.Dir(p) {
		if st, serr := os.Lstat(p); serr == nil && !st.IsDir() {
			if rerr := os.Remove(p); rerr != nil {
				return rerr
			}
			return os.MkdirAll(dir, 0o755)
		}
	}
	return err
}

// remove deletes path and the directories it leaves empty, up to root.
func remove(root, path string) error {
	err := os.Remove(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if st, serr := os.Lstat(path); serr == nil && st.IsDir() {
			return nil // a directory now stands there; nothing of ours to delete
		}
		return err
	}
	for dir := filepath.Dir(path); dir != root && strings.HasPrefix(dir, root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}
