// Package atom harvests an Atom-PMH archived feed (the Atom Feed Protocol
// for Metadata Harvesting: Atom 1.0, RFC 4287, as an archived feed, RFC
// 5005), such as the one an rshub hub serves for each channel at
// /channels/<name>/feed.atom, into a mirror.
//
// A Harvester starts at the subscription document, follows prev-archive
// links until it reaches the newest archive document it has already
// applied (archive documents never change), then applies the newest entry
// of each record in the documents it fetched (the history before it is
// never fetched): an active entry (one with an alternate link) creates or
// updates its record, a deletion entry (no alternate link, an empty
// atom:content without src) deletes it. An entry older than what the
// mirror holds for its atom:id is a historical entry and is skipped, so
// applying a document twice changes nothing. An active entry the Store
// cannot put (DirStore: the resource answers 404, 410 or an error, or does
// not match its rs:md hash and length) is never taken for a deletion: it
// is counted failed, kept pending in the State and retried next time. A
// subscription document with fh:complete holds the whole pool: records it
// does not list are deleted.
//
// The State (the newest archive applied and each record's last change) is
// what makes the next Harvest incremental; save it between runs. A Store
// receives the changes: DirStore mirrors each record's alternate
// representation into a directory.
package atom
