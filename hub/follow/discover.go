package follow

import (
	"net/url"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// Plan is what a follower reads on each poll: an index of Change Lists, an
// archive of closed ones, and the open Change List ("" when unknown).
// Others are the Capability Lists of the Source Description the channel
// does not follow: each is another set of resources, with its own times,
// and a channel has one continuity, so each is followed by a channel of
// its own (its follow URL the Capability List).
type Plan struct {
	CapabilityList string `json:"capabilityList,omitempty"`
	ChangeList     string `json:"changeList,omitempty"`
	Index          string `json:"index,omitempty"`
	Archive        string `json:"archive,omitempty"`
	// ResourceList is the Resource List or Resource List Index, read when
	// the Source offers no Change List: its successive states are diffed.
	ResourceList string   `json:"resourceList,omitempty"`
	Others       []string `json:"otherCapabilityLists,omitempty"`
}

// Empty reports whether the plan names nothing to read.
func (p Plan) Empty() bool { return !p.changes() && p.ResourceList == "" }

// changes reports whether the plan names Change Lists to read (then a
// Resource List is not read).
func (p Plan) changes() bool { return p.ChangeList != "" || p.Index != "" || p.Archive != "" }

// merge fills p's empty fields from q.
func (p Plan) merge(q Plan) Plan {
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&p.CapabilityList, q.CapabilityList)
	fill(&p.ChangeList, q.ChangeList)
	fill(&p.Index, q.Index)
	fill(&p.Archive, q.Archive)
	fill(&p.ResourceList, q.ResourceList)
	if p.Others == nil {
		p.Others = q.Others
	}
	return p
}

// Step is what one fetched document says: what to read on each poll, and
// which documents to fetch next to learn more.
type Step struct {
	Plan Plan
	Next []string
}

// Classify reads one document fetched from u during discovery: doc is the
// parsed document, nil when the body is not ResourceSync (an HTML page, an
// error), and links the response's Link header values. It is pure.
//
//   - not ResourceSync: the Link rel="resourcesync" (a Capability List)
//     and rel="describedby" (a Source Description) targets, to fetch;
//   - Source Description: its first Capability List, to fetch, the
//     others in Plan.Others;
//   - Capability List: its changelist entry, to fetch (a Change List or a
//     Change List Index), its changelist-archive and resourcelist entries;
//   - Change List: itself; its rel="index" Index and rel="archives"
//     archive; its rel="up" Capability List, to fetch;
//   - Change List Index: itself, its rel="archives" archive and its rel="up"
//     Capability List, to fetch;
//   - Change List Archive or Archive Index: itself and its rel="up"
//     Capability List, to fetch;
//   - Resource List or Resource List Index: itself and its rel="up"
//     Capability List, to fetch.
func Classify(u string, links []string, doc *changefeed.Document) Step {
	base, _ := url.Parse(u)
	abs := func(ref string) string {
		if ref == "" || base == nil {
			return ref
		}
		r, err := url.Parse(ref)
		if err != nil {
			return ""
		}
		return base.ResolveReference(r).String()
	}
	var s Step
	next := func(ref string) {
		if ref = abs(ref); ref != "" {
			s.Next = append(s.Next, ref)
		}
	}
	if doc == nil {
		parsed := wire.ParseLinks(links)
		for _, rel := range []string{wire.RelResourceSync, "describedby"} {
			for _, l := range wire.LinksRel(parsed, rel) {
				next(l)
			}
		}
		return s
	}
	switch capa := doc.MD.Capability; {
	case capa == changefeed.CapDescription:
		for _, e := range doc.Entries {
			if e.MD != nil && e.MD.Capability != "" && e.MD.Capability != changefeed.CapCapabilityList {
				continue
			}
			if len(s.Next) == 0 {
				next(e.Loc)
			} else if ref := abs(e.Loc); ref != "" {
				s.Plan.Others = append(s.Plan.Others, ref)
			}
		}
	case capa == changefeed.CapCapabilityList:
		s.Plan.CapabilityList = u
		for _, e := range doc.Entries {
			if e.MD == nil {
				continue
			}
			switch e.MD.Capability {
			case changefeed.CapChangeList:
				next(e.Loc)
			case changefeed.CapChangeListArchive:
				s.Plan.Archive = abs(e.Loc)
			case changefeed.CapResourceList:
				s.Plan.ResourceList = abs(e.Loc)
			}
		}
	case capa == changefeed.CapChangeList && doc.Kind == changefeed.URLSet:
		s.Plan.ChangeList = u
		s.Plan.Index = abs(doc.Link("index"))
		s.Plan.Archive = abs(doc.Link("archives"))
		next(doc.Link("up"))
	case capa == changefeed.CapChangeList:
		s.Plan.Index = u
		s.Plan.Archive = abs(doc.Link("archives"))
		next(doc.Link("up"))
	case capa == changefeed.CapChangeListArchive:
		s.Plan.Archive = u
		next(doc.Link("up"))
	case capa == changefeed.CapResourceList:
		s.Plan.ResourceList = u
		next(doc.Link("up"))
	}
	return s
}

// wellKnown returns the Source Description URL of u's origin.
func wellKnown(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ""
	}
	return p.Scheme + "://" + p.Host + wire.PathWellKnown
}
