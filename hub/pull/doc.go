// Package pull serves, from the hub's log, the same history the hub pushed
// as pull-mode ResourceSync documents (core 1.1 §8, §9, §12; Archives 0.9.1
// §5), so a Destination that was offline catches up with any ResourceSync
// client.
//
// # URL layout
//
// All under the public base URL, in the layout of package wire, which
// builds (wire.CapabilityListPath, ...) and parses (wire.ParsePath) these
// paths and documents them: the Source Description at wire.PathWellKnown
// lists every channel's Capability List; under wire.ChannelPath(name) are
// the channel's Capability List, its open Change List (an alias), its
// Change Lists open or closed under their stable names (the log sequence
// of a list's first notification), its Change List Index, its Change List
// Archive (or Archive Index when paged) and the archive's pages (from 1).
//
// The Capability List's changelist entry points at the index once a channel
// has more than one list, else at the open list; it lists the
// changelist-archive once a list is closed, and the change-notification
// channel (topic URI, rs:ln rel="hub"). A channel with a dataset
// description (hub.Channel.DescribedBy) has rs:ln rel="describedby" to it
// on its Capability List root and on its Source Description entry. Every
// channel document carries a Link header: <capability list>;
// rel="resourcesync", the document's parent with rel="up", and the dataset
// description with rel="describedby" when there is one. robots.txt at the
// root names the Source Description and every Capability List in Sitemap
// lines.
//
// # Lists, index and archive
//
// Lists are cut by changefeed.Rotator (entry limit, Source-time period,
// gaps), a function of the log alone, so every hub process names and fills
// them alike. The Change List Index shows the last Listing.IndexSize closed
// lists and the open one; the archive lists every closed list the log still
// holds, 50,000 (Listing.PageSize) per page, pages grouped by an archive
// index beyond one page. Closed lists link rel="up", "index" and
// "archives"; they never change and are served with
// "Cache-Control: public, max-age=31536000, immutable". The rest is
// short-lived (max-age=5) with strong ETags and Last-Modified.
//
// Entries are the notifications' entries in log order, each copied whole;
// a missing lastmod becomes the change's datetime (else the notification's
// until), since Change Lists require it.
//
// # Retention
//
// A list whose first notification the log no longer holds is dropped from
// the index and the archive and answers 404. A process that starts on a log
// whose beginning was removed lists a channel only from its first list that
// follows a gap or a period boundary (see changefeed.ListBounds.Anchored),
// unless the channel was created after the log's first record.
package pull
