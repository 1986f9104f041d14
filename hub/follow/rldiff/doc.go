// Package rldiff turns successive states of a Source's Resource List into
// the changes between them, with memory bounded whatever the list's size,
// so that a Source publishing only a Resource List (or a Resource List
// Index over many sitemaps) can be followed like one publishing Change
// Lists.
//
// A state is kept as a snapshot: the list's items sorted by loc in one
// file. A [Sorter] builds a snapshot from items in any order by external
// sorting (runs of at most RunSize items sorted in memory and spilled to
// files, then merged), and [Diff] reads two snapshots side by side and
// reports each loc only in the new one as created, only in the old one as
// deleted, and in both with another lastmod, hash or length as updated.
// A 1,000,000-URL list is sorted and diffed in seconds with a heap of a few
// tens of megabytes (see the package's benchmark).
//
// The package does no network I/O and knows nothing of the follower: it
// reads items and writes files in a directory it is given.
package rldiff
