// Package dataset keeps an RDF dataset in step with a ResourceSync Source
// the way Timbuctoo does: each Capability List is one dataset, imported by
// applying in order the N-Quads Unified Diff patches (.nqud) its Change
// List names, or by loading the one dataset file of its Resource List.
//
// This file set holds the pure parts: an N-Quads reader (N-Triples too),
// the patch format (lines starting with a single "+" add a quad, with a
// single "-" retract one, every other line is ignored), and a quad store
// that applies patches idempotently and exports sorted canonical N-Quads.
package dataset
