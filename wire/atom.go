package wire

import "strings"

// Atom-PMH archived feeds (Atom 1.0, RFC 4287, as an archived feed, RFC
// 5005, following the Atom Feed Protocol for Metadata Harvesting).
//
// Each channel has one logical feed derived from the same log as its
// Change Lists: a subscription document (FeedPath) with the entries of the
// open Change List, newest first, and one archive document per closed
// Change List (FeedArchivePath, named like the list by the log sequence of
// its first notification), immutable like the list it mirrors. Documents
// link to each other with RelPrevArchive, RelNextArchive and RelCurrent;
// the subscription document also carries RelSelf and RelHub.
//
// One entry per changed resource: atom:id and the alternate link are the
// resource's URI (the link has the entry's media type when the
// notification gave one), atom:updated the change's datetime, atom:title
// the change and the URI. A deletion entry has no alternate link and an
// empty atom:content without src. The entry's ResourceSync metadata is
// kept as an rs:md extension element (NSAtomRS) with the attributes the
// notification gave: change, hash, length, type, datetime.
const (
	// FeedFile names a channel's Atom subscription document.
	FeedFile = "feed.atom"
	// FeedDir holds a channel's Atom archive documents, named by ListFile
	// of the first sequence of the Change List each mirrors.
	FeedDir = "feed"

	// PatternFeed is the ServeMux pattern of the subscription document.
	PatternFeed = channelsDir + "{name}/" + FeedFile
	// PatternFeedArchive is the ServeMux pattern of an archive document.
	PatternFeedArchive = channelsDir + "{name}/" + FeedDir + "/{file}"

	// MediaTypeAtom is the media type of Atom Feed Documents.
	MediaTypeAtom = "application/atom+xml"

	// NSAtom is the Atom namespace.
	NSAtom = "http://www.w3.org/2005/Atom"
	// NSFeedHistory is the namespace of RFC 5005's fh:archive and
	// fh:complete.
	NSFeedHistory = "http://purl.org/syndication/history/1.0"
	// NSAtomRS is the ResourceSync namespace, used for the rs:md extension
	// element of feed entries.
	NSAtomRS = "http://www.openarchives.org/rs/terms/"

	// RelPrevArchive links a feed document to the next older archive
	// document (RFC 5005 §4).
	RelPrevArchive = "prev-archive"
	// RelNextArchive links an archive document to the next newer one.
	RelNextArchive = "next-archive"
	// RelCurrent links an archive document to the subscription document.
	RelCurrent = "current"
	// RelAlternate links an entry to its resource, and a capability
	// document to the feed.
	RelAlternate = "alternate"
)

// FeedPath returns the path of a channel's Atom subscription document.
func FeedPath(name string) string { return ChannelPath(name) + "/" + FeedFile }

// FeedArchivePath returns the path of the Atom archive document that
// mirrors the closed Change List of a channel starting at sequence seq.
func FeedArchivePath(name string, seq uint64) string {
	return ChannelPath(name) + "/" + FeedDir + "/" + ListFile(seq)
}

// FeedURL returns the URL of the Atom subscription document of the channel
// whose Capability List, at the hub, is capabilityList; "" when
// capabilityList is not a hub Capability List URL.
func FeedURL(capabilityList string) string {
	dir, ok := strings.CutSuffix(capabilityList, "/"+CapabilityListFile)
	if !ok || !strings.Contains(dir, strings.TrimSuffix(channelsDir, "/")) {
		return ""
	}
	return dir + "/" + FeedFile
}

// FeedLink returns the Link header value that advertises the Atom feed of
// the channel whose Capability List is capabilityList:
// <feed>; rel="alternate"; type="application/atom+xml"; "" when FeedURL is.
func FeedLink(capabilityList string) string {
	u := FeedURL(capabilityList)
	if u == "" {
		return ""
	}
	return "<" + u + `>; rel="` + RelAlternate + `"; type="` + MediaTypeAtom + `"`
}
