package kvstore

import "sync"

// maxRevMemo bounds the keys a revMemo remembers: enough for every channel
// state of a hub at hub.DefaultMaxChannelStates.
const maxRevMemo = 16384

// revMemo remembers the value and revision this store last wrote for keys
// it updates by compare-and-set, so that the next update of a key tries
// its compare-and-set on the remembered revision without reading the key
// first: one round trip instead of two while no other hub wrote the key.
// A compare-and-set that loses (another writer got there) forgets the key,
// and the update reads it as before. Entries are tied to the connection
// generation of their buckets: a new generation forgets them all.
type revMemo struct {
	mu sync.Mutex
	m  map[string]memoEntry
}

type memoEntry struct {
	gen, rev uint64
	val      []byte // owned by the memo; never modified
}

// get returns key's remembered revision and value for buckets generation
// gen; the caller must not modify val.
func (r *revMemo) get(gen uint64, key string) (rev uint64, val []byte, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.m[key]
	if !ok || e.gen != gen {
		return 0, nil, false
	}
	return e.rev, e.val, true
}

// put remembers that key holds val at rev; val must not be modified
// afterwards. Beyond maxRevMemo keys, arbitrary others are forgotten.
func (r *revMemo) put(gen uint64, key string, rev uint64, val []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]memoEntry{}
	}
	if _, ok := r.m[key]; !ok {
		for k := range r.m {
			if len(r.m) < maxRevMemo {
				break
			}
			delete(r.m, k)
		}
	}
	r.m[key] = memoEntry{gen: gen, rev: rev, val: val}
}

// forget drops key.
func (r *revMemo) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, key)
}
