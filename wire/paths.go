package wire

import (
	"net/url"
	"strconv"
	"strings"
)

// Paths of the hub's pull-mode documents and endpoints, at the hub's
// origin; {name} is a channel name, {file} a zero-padded "<n>.xml" (see
// ListFile).
const (
	// PathWellKnown is the Source Description (ResourceSync §10.2): every
	// channel's Capability List.
	PathWellKnown = "/.well-known/resourcesync"

	// PathRobots is the hub's robots.txt: a Sitemap line for the Source
	// Description and for every channel's Capability List (ResourceSync
	// §12.2, the robots.txt entry point).
	PathRobots = "/robots.txt"

	channelsDir = "/channels/"
	topicsDir   = "/topics/"

	// CapabilityListFile names a channel's Capability List.
	CapabilityListFile = "capabilitylist.xml"
	// ChangeListFile names a channel's open Change List (an alias of its
	// stable name under ChangeListDir).
	ChangeListFile = "changelist.xml"
	// ChangeListDir holds a channel's Change Lists, open or closed, named
	// by the log sequence of their first notification.
	ChangeListDir = "changelist"
	// ChangeListIndexFile names a channel's Change List Index.
	ChangeListIndexFile = "changelist-index.xml"
	// ChangeListArchiveFile names a channel's Change List Archive, or its
	// Archive Index when the archive has pages.
	ChangeListArchiveFile = "changelist-archive.xml"
	// ChangeListArchiveDir holds the pages of a channel's archive,
	// numbered from 1.
	ChangeListArchiveDir = "changelist-archive"
)

// ServeMux patterns of the documents and endpoints.
const (
	PatternSourceDescription     = PathWellKnown
	PatternRobots                = PathRobots
	PatternCapabilityList        = channelsDir + "{name}/" + CapabilityListFile
	PatternChangeList            = channelsDir + "{name}/" + ChangeListFile
	PatternChangeListFile        = channelsDir + "{name}/" + ChangeListDir + "/{file}"
	PatternChangeListIndex       = channelsDir + "{name}/" + ChangeListIndexFile
	PatternChangeListArchive     = channelsDir + "{name}/" + ChangeListArchiveFile
	PatternChangeListArchivePage = channelsDir + "{name}/" + ChangeListArchiveDir + "/{file}"
	PatternTopic                 = topicsDir + "{name}"
	PatternWebSocket             = PathWebSocket
)

// ChannelPath returns the path under which a channel's documents are.
func ChannelPath(name string) string { return channelsDir + url.PathEscape(name) }

// CapabilityListPath returns the path of a channel's Capability List.
func CapabilityListPath(name string) string { return ChannelPath(name) + "/" + CapabilityListFile }

// ChangeListPath returns the path of a channel's open Change List.
func ChangeListPath(name string) string { return ChannelPath(name) + "/" + ChangeListFile }

// ChangeListFilePath returns the stable path of a channel's Change List
// that starts at log sequence seq.
func ChangeListFilePath(name string, seq uint64) string {
	return ChannelPath(name) + "/" + ChangeListDir + "/" + ListFile(seq)
}

// ChangeListIndexPath returns the path of a channel's Change List Index.
func ChangeListIndexPath(name string) string { return ChannelPath(name) + "/" + ChangeListIndexFile }

// ChangeListArchivePath returns the path of a channel's Change List Archive.
func ChangeListArchivePath(name string) string {
	return ChannelPath(name) + "/" + ChangeListArchiveFile
}

// ChangeListArchivePagePath returns the path of page page (from 1) of a
// channel's archive.
func ChangeListArchivePagePath(name string, page int) string {
	return ChannelPath(name) + "/" + ChangeListArchiveDir + "/" + ListFile(uint64(page))
}

// TopicPath returns the path of the topic URI of a channel the hub hosts.
func TopicPath(name string) string { return topicsDir + url.PathEscape(name) }

// ListFileDigits is the width of the zero-padded number in a list or
// archive page file name: every uint64 fits, so the names, and the URLs
// of one channel's lists, sort in the order of their numbers (which is
// chronological order), as clients that read an index in URL order expect.
const ListFileDigits = 20

// ListFile returns the file name of a list or page numbered n: n in
// decimal, zero-padded to ListFileDigits digits, then ".xml"
// ("00000000000000000042.xml").
func ListFile(n uint64) string {
	s := strconv.FormatUint(n, 10)
	return strings.Repeat("0", ListFileDigits-len(s)) + s + ".xml"
}

// ParseListFile reverses ListFile: n from a file name of exactly
// ListFileDigits decimal digits and ".xml".
func ParseListFile(file string) (uint64, bool) {
	s, ok := strings.CutSuffix(file, ".xml")
	if !ok || len(s) != ListFileDigits {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// ParseLegacyListFile reads the file names hubs before zero-padding used,
// "<n>.xml" with n in canonical decimal (no leading zero, no sign). The hub
// answers such a name with a permanent redirect to ListFile(n).
func ParseLegacyListFile(file string) (uint64, bool) {
	s, ok := strings.CutSuffix(file, ".xml")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && strconv.FormatUint(n, 10) == s
}

// Document names one kind of document or endpoint of the hub's layout.
type Document int

// Documents of the layout.
const (
	DocUnknown               Document = iota
	DocSourceDescription              // PathWellKnown
	DocCapabilityList                 // /channels/{name}/capabilitylist.xml
	DocChangeList                     // /channels/{name}/changelist.xml
	DocChangeListFile                 // /channels/{name}/changelist/{n}.xml
	DocChangeListIndex                // /channels/{name}/changelist-index.xml
	DocChangeListArchive              // /channels/{name}/changelist-archive.xml
	DocChangeListArchivePage          // /channels/{name}/changelist-archive/{n}.xml
	DocTopic                          // /topics/{name}
	DocWebSocket                      // /ws
)

// channelDoc returns the document a file of a channel's directory names.
func channelDoc(file string) Document {
	switch file {
	case CapabilityListFile:
		return DocCapabilityList
	case ChangeListFile:
		return DocChangeList
	case ChangeListIndexFile:
		return DocChangeListIndex
	case ChangeListArchiveFile:
		return DocChangeListArchive
	}
	return DocUnknown
}

// Path is a path of the hub's layout, parsed.
type Path struct {
	Doc     Document
	Channel string // the channel name, for channel documents and topics
	N       uint64 // the list's first sequence or the archive page, for files
}

// ParsePath reads an (unescaped) URL path of the hub's layout. It matches
// the end of p, so a hub published under a path prefix is understood too;
// a path of no document of the layout gives ok false.
func ParsePath(p string) (_ Path, ok bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	n := len(parts)
	at := func(i int) string { // i-th segment from the end, 1-based
		if i > n {
			return ""
		}
		return parts[n-i]
	}
	channels := strings.Trim(channelsDir, "/")
	if n >= 4 && at(4) == channels && at(3) != "" {
		num, isFile := ParseListFile(at(1))
		if !isFile {
			num, isFile = ParseLegacyListFile(at(1))
		}
		if isFile {
			switch at(2) {
			case ChangeListDir:
				return Path{Doc: DocChangeListFile, Channel: at(3), N: num}, true
			case ChangeListArchiveDir:
				return Path{Doc: DocChangeListArchivePage, Channel: at(3), N: num}, true
			}
		}
	}
	if n >= 3 && at(3) == channels && at(2) != "" {
		if doc := channelDoc(at(1)); doc != DocUnknown {
			return Path{Doc: doc, Channel: at(2)}, true
		}
	}
	switch {
	case n >= 2 && "/"+at(2)+"/"+at(1) == PathWellKnown:
		return Path{Doc: DocSourceDescription}, true
	case n >= 2 && at(2) == strings.Trim(topicsDir, "/") && at(1) != "":
		return Path{Doc: DocTopic, Channel: at(1)}, true
	case at(1) == strings.TrimPrefix(PathWebSocket, "/"):
		return Path{Doc: DocWebSocket}, true
	}
	return Path{}, false
}
