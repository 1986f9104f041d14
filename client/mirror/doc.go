// Package mirror keeps a local directory exactly in step with a
// ResourceSync Source through a hub's change notifications.
//
// A Mirror applies notifications in Source-time order: created and updated
// resources are fetched from their loc, checked against the entry's length
// and hash (md5, sha-1, sha-256) and written atomically (temporary file,
// then rename); deleted ones are removed. A loc maps to a path under the
// mirror directory only if it cannot escape it (MapPath). Applying is
// idempotent: a file that already has the announced length and hash is
// not fetched again, and a resource that changed again since (its content
// no longer matches, or it is gone) is left to the later notification
// that announces that change.
//
// # Position and gaps
//
// The State file records P, the Source until up to which every
// notification has been applied, and the hub's log sequence of the last
// notification seen (when the transport tells it), so a restart resumes.
// A notification [from, until] is handled by comparing it with P:
//
//   - until <= P: already applied (a duplicate or a late retry), skipped;
//   - from <= P < until: its entries with datetime >= P are applied and P
//     becomes until;
//   - from > P: a gap. Before applying it, the Mirror catches up from the
//     hub's pull-mode Change Lists and Change List Archive (found through
//     the hub's Capability List for the topic): every entry with P <=
//     datetime <= from, in log order, collapsed to the last change per
//     resource. Then P is from and the notification is applied.
//
// Starting empty, the Mirror takes a baseline from the Source's Resource
// List when it has one (P is then the list's "at"), else from the hub's
// Change Lists from the beginning. Sync catches up with everything the
// hub's lists hold, which also heals a gap at the end of the history that
// no later notification would reveal.
package mirror
