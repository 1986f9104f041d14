package jslog

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/wire"
)

// epochLen is the length of a new epoch: 16 hex digits, 64 random bits.
const epochLen = 16

// newEpoch returns a random epoch.
func newEpoch() string {
	b := make([]byte, epochLen/2)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// derivedEpoch is the epoch of a stream created before epochs were given:
// derived from its name and creation time, so every hub sharing it
// derives the same one, and a stream created again gets another.
func derivedEpoch(name string, created time.Time) string {
	sum := sha256.Sum256([]byte(name + "\x00" + created.UTC().Format(time.RFC3339Nano)))
	return hex.EncodeToString(sum[:epochLen/2])
}

// storedEpoch is the epoch in the stream's metadata, or the one derived
// from its creation when it holds none (a stream from before epochs, or a
// server too old to keep metadata).
func storedEpoch(name string, info *jetstream.StreamInfo) string {
	if e := info.Config.Metadata[wire.MetadataEpoch]; wire.ValidEpoch(e) {
		return e
	}
	return derivedEpoch(name, info.Created)
}

// ensureStream creates the stream with cfg and a new epoch, or, when it
// exists, updates it to cfg keeping its epoch (derivedEpoch when it has
// none). Creating first, never overwriting, keeps the epoch of a stream
// another hub created meanwhile.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, string, error) {
	epoch := newEpoch()
	cfg.Metadata = map[string]string{wire.MetadataEpoch: epoch}
	st, err := js.CreateStream(ctx, cfg)
	if err == nil {
		return st, storedEpoch(cfg.Name, st.CachedInfo()), nil
	}
	if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return nil, "", err
	}
	cur, err := js.Stream(ctx, cfg.Name)
	if err != nil {
		return nil, "", err
	}
	info := cur.CachedInfo()
	epoch = storedEpoch(cfg.Name, info)
	cfg.Metadata = map[string]string{}
	for k, v := range info.Config.Metadata {
		if !strings.HasPrefix(k, "_nats.") { // the server's own, which it sets itself
			cfg.Metadata[k] = v
		}
	}
	cfg.Metadata[wire.MetadataEpoch] = epoch
	st, err = js.UpdateStream(ctx, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("update: %w", err)
	}
	return st, epoch, nil
}

// Epoch returns the identity of the log: a random id given to the stream
// when it was created (wire.MetadataEpoch in its metadata), the same for
// every hub sharing it and after restarts, different for a stream created
// again (a new data directory, a deleted stream). Records read from the
// log carry it (wire.Record.Epoch); it makes cursors and webhook-ids unique
// across rebuilt logs (wire.Cursor). It does no I/O.
func (l *Log) Epoch() string {
	if h := l.current(); h != nil {
		return h.epoch
	}
	return ""
}
