// Package follow makes pull-only ResourceSync Sources push-capable: for
// every channel with a Source URL (hub.Channel.Follow) the hub polls the
// Source's documents and publishes the entries it has not seen as change
// notifications, with contiguous from and until.
//
// Discovery starts at the Source URL and reads what it finds: HTTP Link
// headers (rel="resourcesync" to a Capability List, rel="describedby" to
// a Source Description), the Source Description at /.well-known/resourcesync
// of the Source's origin, a Capability List's changelist (a Change List or
// a Change List Index) and changelist-archive entries, a Change List's or
// Index's rel="up" Capability List and rel="archives" archive. The result
// is a Plan: an Index, an Archive, and/or an open Change List.
//
// Each poll reads the Plan's index or archive (conditional GETs with ETag
// and Last-Modified, so an unchanged document costs a 304; only the
// validators that cannot hide a change, TrustedValidators: a conditional
// request saves bandwidth, never content), picks the
// lists that may hold entries after the channel's continuity anchor, and
// reads them oldest first, a closed list to its end before the next one:
// when the Source rotates its open list between two polls, nothing written
// to the old list after the previous poll is lost. A list is closed only
// when the Source says so: it is in the Change List Archive, or a newer
// list follows it in the Change List Index. The list the Capability List
// names, and the newest of an index, are open and read on every poll
// whatever their root until says (the resync reference Source stamps its
// one Change List with the time of each request). Closed lists are read to
// their end once, in full (no condition: a list newly closed may have
// changed in a way its validators did not tell); those ending before the
// anchor are skipped. When an open
// list starts after what the channel holds and the Source offers no index
// or archive to read the rest from, the next notification starts at the
// list's from: the hub records the gap (channel continuity, rshub_gaps_total)
// and the follow status counts it.
//
// New entries are told by identity (location, change, datetime, hash,
// length; Fresh), not by datetime alone: a change written with the
// anchor's very datetime after a poll is published, none twice. The
// follower remembers the identities of the entries at the anchor only
// (changefeed.Seen), and learns them again from the hub's log (Hub.FollowAnchor) when
// the channel's log moved without it: a restart, another hub of the
// cluster, an operator's reset. The publishing itself is
// hub.PublishFollowed.
//
// The follower's position is the channel's anchor, which the hub derives
// from its log: a restarted hub starts again where its log ends, with no
// state of its own beyond validators and caches it can lose.
//
// Polls come every channel's PollInterval plus up to 10% jitter; never
// before a document's Cache-Control max-age or a Retry-After has passed
// (both capped at MaxWait); after errors with exponential backoff up to
// MaxBackoff. Every fetch goes through the hub's SSRF-guarded client and
// the hub's body limit. With several hub processes, one follows each
// channel at a time (an expiring claim in the store) and writes its Status
// to the store, at most once a second: every hub answers the same, and
// shows when the owner's claim expired.
//
// The pure parts (Classify, SelectLists, Fresh, Advance, Window,
// NextDelay, ParseMaxAge, ParseRetryAfter, TrustedValidators) are
// table-tested; Engine is
// the thin I/O loop around them.
package follow
