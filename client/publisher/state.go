package publisher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// State is what a Publisher must remember between notifications: the until
// of the last notification the hub acknowledged and, while one is in
// flight, its exact bytes.
type State struct {
	Until   time.Time `json:"until"`             // until of the last acknowledged notification; zero before the first
	Pending []byte    `json:"pending,omitempty"` // a notification sent but not yet acknowledged
	// PendingUntil is the until of Pending.
	PendingUntil time.Time `json:"pendingUntil,omitzero"`
}

// Store persists a Publisher's State. Load returns the zero State when
// nothing was saved yet.
type Store interface {
	Load(ctx context.Context) (State, error)
	Save(ctx context.Context, st State) error
}

// MemoryStore is a Store in memory: continuity holds for the life of the
// process only.
type MemoryStore struct {
	mu sync.Mutex
	st State
}

// Load returns the saved state.
func (m *MemoryStore) Load(context.Context) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st, nil
}

// Save keeps st.
func (m *MemoryStore) Save(_ context.Context, st State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st = st
	return nil
}

// FileStore is a Store in a JSON file, replaced atomically (written to a
// temporary file in the same directory, synced, then renamed) on each Save.
type FileStore struct {
	Path string
}

// Load reads the file; a missing file is the zero State.
func (f FileStore) Load(context.Context) (State, error) {
	var st State
	raw, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("publisher: load state: %w", err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("publisher: state file %s: %w", f.Path, err)
	}
	return st, nil
}

// Save writes st to the file atomically.
func (f FileStore) Save(_ context.Context, st State) error {
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("publisher: encode state: %w", err)
	}
	if err := writeFileAtomic(f.Path, raw); err != nil {
		return fmt.Errorf("publisher: save state: %w", err)
	}
	return nil
}

// writeFileAtomic replaces path with data so that readers see either the
// old or the new content.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
