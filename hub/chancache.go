package hub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// channelCacheTTL is how long a channel definition read from the store is
// reused by intake without asking the store whether channels changed;
// changes made through another hub process show within it.
const channelCacheTTL = 2 * time.Second

// cachedChannel is a channel definition read from the store at fetched,
// when the store's channels version was ver ("" when unknown).
type cachedChannel struct {
	ch      Channel
	fetched time.Time
	ver     string
}

// chanVersion is the store's channels version as last read, so that a
// hub publishing to many channels asks the store one question every
// channelCacheTTL instead of reading each channel's definition again.
type chanVersion struct {
	readMu sync.Mutex // one read of the store at a time
	mu     sync.Mutex // guards ver and read; never held over I/O
	ver    string
	read   time.Time // zero: never read, or the last read failed
	// changes counts the channel puts and deletes made through this hub
	// once the store has them (forgetChannel): see ChannelChanges.
	changes atomic.Uint64
}

// held returns the version last read and whether it is younger than
// channelCacheTTL at now.
func (v *chanVersion) held(now time.Time) (ver string, fresh bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ver, !v.read.IsZero() && now.Sub(v.read) < channelCacheTTL
}

// expire makes the next current read the store's version again: this hub
// changed a channel, and what is kept under the version held is stale.
func (v *chanVersion) expire() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.read = time.Time{}
}

// current returns the store's channels version, read again when the one
// held is channelCacheTTL old; ok is false when the store cannot tell ("")
// or the version cannot be read (the cache then falls back on
// channelCacheTTL).
func (v *chanVersion) current(ctx context.Context, store Store, now time.Time) (ver string, ok bool) {
	if ver, fresh := v.held(now); fresh {
		return ver, true
	}
	v.readMu.Lock()
	defer v.readMu.Unlock()
	if ver, fresh := v.held(now); fresh { // read by another caller meanwhile
		return ver, true
	}
	ver, err := store.ChannelsVersion(ctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil || ver == "" {
		v.read = time.Time{}
		return "", false
	}
	v.ver, v.read = ver, now
	return ver, true
}

// lookupChannel returns the channel of topic. A definition read from the
// store is reused while it is younger than channelCacheTTL, or, with a
// store that has a channels version, for as long as that version stays
// the same: the version is read first, so a definition is never older
// than the version it is kept under. A definition not kept yet comes from
// the store's listing of that version when it holds one (Store.ListedChannel),
// else from a read of the store.
func (h *Hub) lookupChannel(ctx context.Context, topic string) (Channel, error) {
	now := h.cfg.Now()
	ver, versioned := h.chanVer.current(ctx, h.cfg.Store, now)
	h.mu.Lock()
	c, ok := h.chanCache[topic]
	h.mu.Unlock()
	if ok && (now.Sub(c.fetched) < channelCacheTTL || (versioned && c.ver != "" && c.ver == ver)) {
		return c.ch, nil
	}
	if !versioned {
		ver = ""
	}
	ch, err := h.readChannel(ctx, topic, ver)
	if err != nil {
		return ch, err
	}
	h.mu.Lock()
	h.chanCache[topic] = cachedChannel{ch: ch, fetched: now, ver: ver}
	h.mu.Unlock()
	return ch, nil
}

// readChannel reads the channel of topic from the store: from its listing
// of channels version ver when it holds one and topic is in it, else with
// a read of its own (a channel missing from the listing may have been put
// since; or topic is a framework channel's, or a channel's stored under
// another spelling of topic).
func (h *Hub) readChannel(ctx context.Context, topic, ver string) (Channel, error) {
	if ch, ok := h.cfg.Store.ListedChannel(ver, topic); ok {
		return ch, nil
	}
	ch, err := h.cfg.Store.Channel(ctx, topic)
	if errors.Is(err, ErrNotFound) {
		ch, err = h.frameworkChannelForTopic(ctx, topic)
	}
	if errors.Is(err, ErrNotFound) {
		// a channel stored before topics were normalised, under another
		// spelling of topic: it keeps its spelling, and is found by this one
		ch, err = h.storedChannelByNormalTopic(ctx, topic)
	}
	return ch, err
}

// forgetChannel drops the cached definition of topic, after this hub
// changed or deleted the channel in the store, makes the next lookup read
// the channels version again (the definition and the store's listing kept
// under the version held are stale), and counts the change
// (ChannelChanges).
func (h *Hub) forgetChannel(topic string) {
	h.mu.Lock()
	delete(h.chanCache, topic)
	h.mu.Unlock()
	h.chanVer.expire()
	h.chanVer.changes.Add(1)
}

// ChannelChanges counts the channel puts and deletes made through this
// hub process, each counted once the store has it. A reader that keeps a
// listing of the store's channels (pull mode, Config.LocalChanges there)
// lists again when the count moved since its listing, so a channel put or
// deleted here shows in its documents at once; changes made through other
// hub processes show when its listing expires. It does no I/O.
func (h *Hub) ChannelChanges() uint64 { return h.chanVer.changes.Load() }

// drop reports whether the idle sweep drops c at now, given the channels
// version last read: c can no longer be used (it is older than
// channelCacheTTL and was not read under that version), or was read
// channelIdle ago (a busy channel's definition is then read again, an idle
// one's is forgotten).
func (c cachedChannel) drop(ver string, now time.Time) bool {
	age := now.Sub(c.fetched)
	return age >= channelIdle || (age >= channelCacheTTL && (c.ver == "" || c.ver != ver))
}
