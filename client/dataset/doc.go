// Package dataset keeps an RDF dataset in step with a ResourceSync Source
// the way Timbuctoo does: each Capability List is one dataset, described
// by its describedby document (VoID-style RDF: title, description, rights
// holder, license, provenance), and imported by applying in order the
// N-Quads Unified Diff patches (.nqud) its Change List names, or by
// loading the one dataset file of its Resource List.
//
// The pure parts: an N-Quads reader (N-Triples too), readers for Turtle,
// TriG, RDF/XML and JSON-LD (through github.com/piprate/json-gold)
// chosen by media type (MediaType: an explicit rs:md type overrules the
// extension), the patch format (ReadPatch: lines starting with a single
// "+" add a quad, with a single "-" retract one, every other line is
// ignored), a quad Store that applies patches idempotently and exports
// sorted canonical N-Quads, and Canonical / Isomorphic, which compare
// datasets up to blank node relabelling (W3C RDF Dataset Canonicalization,
// URDNA2015, through json-gold). The N-Quads, Turtle and RDF/XML readers
// are this package's own because they stream (a million-quad file is read
// quad by quad); json-gold's N-Quads reader takes a whole document.
//
// The I/O parts: Discover finds a Source's datasets from any URL (its
// Link headers, /.well-known/resourcesync, robots.txt Sitemap: lines) and
// reads each description's title. An Importer keeps one dataset in a
// directory: Import builds it (patch by patch, each checked against its
// length and hash, or from the dataset file), and Follow keeps it in step
// through a hub's change notifications (webhook, WebSocket, SSE or NATS, with
// client/mirror doing the transport and healing gaps from the hub's
// Change Lists), applying each new patch as it arrives.
//
// # On disk
//
// The directory holds the dataset as sorted canonical N-Quads
// (SnapshotFile), a journal of the patches applied since (JournalFile,
// synced before a patch counts as applied), the fetched patches
// (PatchDir), the importer's State (StateFile) and the follower's
// client/mirror state (FollowStateFile). Reopening loads the snapshot and
// replays the journal; a patch fetched but never applied is removed so
// that it is fetched again. Applying is idempotent: a patch delivered
// twice is applied once, and replaying the journal over a snapshot that
// already holds part of it changes nothing (a patch sets each quad it
// names to present or absent).
package dataset
