// Package snapshot keeps the last listing a store read together with the
// version the store gave it, so that a listing read often and changed
// rarely (the hub's channels, read every few seconds by several loops) is
// decoded again only when the store says it changed: one version read
// instead of a read and decode of every entry.
package snapshot

import (
	"slices"
	"sync"
)

// List is the last listing of values of type T and its version. The zero
// value holds none. It is safe for concurrent use; T should hold no
// pointers, slices or maps a caller could change through the copies.
type List[T any] struct {
	mu    sync.Mutex
	ok    bool
	ver   string
	items []T
}

// Get returns a copy of the listing when the one held has version ver.
func (l *List[T]) Get(ver string) ([]T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ok || l.ver != ver {
		return nil, false
	}
	return slices.Clone(l.items), true
}

// Find returns the item of the listing held under ver, a non-empty
// version, for which cmp returns 0, searching it in place by binary
// search: the listing is ordered by what cmp compares (cmp returns the
// order of an item against the one sought, as slices.BinarySearchFunc
// has it). false when the listing held is of another version or holds
// no such item.
func (l *List[T]) Find(ver string, cmp func(T) int) (T, bool) {
	var zero T
	if ver == "" {
		return zero, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ok || l.ver != ver {
		return zero, false
	}
	i, found := slices.BinarySearchFunc(l.items, 0, func(it T, _ int) int { return cmp(it) })
	if !found {
		return zero, false
	}
	return l.items[i], true
}

// Put holds a copy of items as the listing of version ver, read after ver
// was (so that a change made in between moves the version past it).
func (l *List[T]) Put(ver string, items []T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ok, l.ver, l.items = true, ver, slices.Clone(items)
}
