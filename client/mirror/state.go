package mirror

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/subscriber"
)

// State is how far a Mirror has applied, kept in a JSON file.
type State struct {
	Topic string `json:"topic"`
	Hub   string `json:"hub"`
	// Until is P: every notification with until <= P has been applied.
	Until time.Time `json:"until,omitzero"`
	// Seq is the hub's log sequence of the last notification handled
	// through a transport that tells it (WebSocket, NATS); 0 if unknown.
	Seq uint64 `json:"seq,omitempty"`
	// Epoch is the identity of the hub's log Seq is a position of (see
	// wire.Cursor); "" if unknown.
	Epoch string `json:"epoch,omitempty"`
	// Baselined says the initial baseline was taken.
	Baselined bool `json:"baselined,omitempty"`
	// Subscription is the webhook subscription, kept so a restart reuses
	// its callback URL and secret.
	Subscription *subscriber.Subscription `json:"subscription,omitempty"`
	// Framework is the webhook subscription to the framework channel
	// (Config.Framework), kept like Subscription.
	Framework *subscriber.Subscription `json:"framework,omitempty"`
	// Applied counts the notifications applied through a transport.
	Applied uint64 `json:"applied,omitempty"`
	// Filter is the Config.Filter the mirror was made with; nil: none.
	Filter *changefeed.Filter `json:"filter,omitempty"`
	// BaseURL is the Config.BaseURL the mirror was made with ("": host/path
	// paths); nil: not recorded (a state file of an earlier version).
	BaseURL *string `json:"baseURL,omitempty"`
}

// LoadState reads a state file; a missing file is the zero State.
func LoadState(path string) (State, error) {
	var st State
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("mirror: load state: %w", err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("mirror: state file %s: %w", path, err)
	}
	return st, nil
}

// SaveState replaces the state file atomically, readable by its owner only
// (it holds the subscription's secret).
func SaveState(path string, st State) error {
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("mirror: encode state: %w", err)
	}
	if err := writeAtomic(path, func(f *os.File) error { _, err := f.Write(append(raw, '\n')); return err }, 0o600); err != nil {
		return fmt.Errorf("mirror: save state: %w", err)
	}
	return nil
}

// tmpPrefix starts the name of every temporary file the Mirror writes, so
// they can be told apart from mirrored files.
const tmpPrefix = ".rshub-tmp-"

// writeAtomic creates path's content with write into a temporary file in
// the same directory, syncs it and renames it over path.
func writeAtomic(path string, write func(*os.File) error, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), tmpPrefix+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return nil
}
