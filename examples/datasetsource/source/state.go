package source

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Files and directories in Config.Dir.
const (
	stateFile     = "state.json"     // the patches made and how far the hub acknowledged them
	publisherFile = "publisher.json" // client/publisher's from/until continuity and pending bytes
	datasetFile   = "dataset.nq"     // the current dataset, sorted canonical N-Quads
	changesDir    = "changes"        // the patches, one .nqud file each
)

// Patch is one N-Quads Unified Diff the Source wrote: patch 1 loads the
// initial dataset into an empty store, every later one is one edit.
type Patch struct {
	N        int       `json:"n"`        // 1-based, in order of application
	File     string    `json:"file"`     // file name under changes/ ("0000000001.nqud")
	Time     time.Time `json:"time"`     // when it was made; strictly increasing
	Hash     string    `json:"hash"`     // "md5:… sha-256:…" of the file
	Length   int64     `json:"length"`   // bytes
	Adds     int       `json:"adds"`     // "+" lines
	Retracts int       `json:"retracts"` // "-" lines
}

// state is what state.json holds. It is the commit point of an edit: a
// patch file exists before the state names it, and dataset.nq is rebuilt
// from the patches at start.
type state struct {
	Seed    uint64  `json:"seed"`
	Patches []Patch `json:"patches"`
	// Published is how many patches (the first ones) the hub acknowledged.
	Published int `json:"published"`
	// Announcing is the patch whose notification was last handed to the
	// publisher, and AnnounceFrom the publisher's until at that moment: an
	// until that moved since (after a crash, or a pending notification
	// flushed) means the hub acknowledged it.
	Announcing   int       `json:"announcing,omitempty"`
	AnnounceFrom time.Time `json:"announceFrom,omitzero"`
}

// loadState reads dir's state.json; a missing file gives ok false.
func loadState(dir string) (st state, ok bool, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return state{}, false, nil
	}
	if err != nil {
		return state{}, false, fmt.Errorf("datasetsource: read state: %w", err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return state{}, false, fmt.Errorf("datasetsource: %s: %w", stateFile, err)
	}
	return st, true, nil
}

// saveState writes st to dir's state.json atomically.
func saveState(dir string, st *state) error {
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("datasetsource: encode state: %w", err)
	}
	return writeAtomic(filepath.Join(dir, stateFile), raw)
}

// writeAtomic replaces path with data: a temporary file in the same
// directory, synced, renamed over path, and the directory synced.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("datasetsource: write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("datasetsource: write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// hashOf returns the ResourceSync hash attribute value of data: md5 and
// sha-256, space-separated.
func hashOf(data []byte) string {
	m := md5.Sum(data)
	s := sha256.Sum256(data)
	return "md5:" + hex.EncodeToString(m[:]) + " sha-256:" + hex.EncodeToString(s[:])
}

// readPatch reads patch p's file from dir and checks its length and hash.
func readPatch(dir string, p Patch) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, changesDir, p.File))
	if err != nil {
		return nil, fmt.Errorf("datasetsource: patch %d: %w", p.N, err)
	}
	if int64(len(data)) != p.Length || hashOf(data) != p.Hash {
		return nil, fmt.Errorf("datasetsource: patch %d (%s) does not match its recorded length and hash", p.N, p.File)
	}
	return data, nil
}

// patchFile names patch n: zero-padded so that file names, and URLs, sort
// in the order the patches apply.
func patchFile(n int) string { return fmt.Sprintf("%010d.nqud", n) }

// countLines counts the "+" and "-" lines of a patch body (the file
// headers "+++"/"---" are not changes).
func countLines(body []byte) (adds, retracts int) {
	for _, line := range bytes.Split(body, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("+++")), bytes.HasPrefix(line, []byte("---")):
		case bytes.HasPrefix(line, []byte("+")):
			adds++
		case bytes.HasPrefix(line, []byte("-")):
			retracts++
		}
	}
	return adds, retracts
}
