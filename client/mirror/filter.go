package mirror

import (
	"net/url"
	"strings"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// filterKey names a filter for messages and for comparing the filter of a
// state file with the configured one: equal filters have equal keys, nil
// and the zero Filter are "none".
func filterKey(f *changefeed.Filter) string {
	if f == nil || f.IsZero() {
		return "none"
	}
	var parts []string
	for _, p := range f.Prefixes {
		parts = append(parts, "prefix="+p)
	}
	if len(f.Changes) > 0 {
		cs := make([]string, len(f.Changes))
		for i, c := range f.Changes {
			cs[i] = string(c)
		}
		parts = append(parts, "change="+strings.Join(cs, ","))
	}
	return strings.Join(parts, " ")
}

// addFilterQuery adds f to a WebSocket or Server-Sent Events session
// query (wire.ParamPrefix, repeatable; wire.ParamChange, comma-separated).
func addFilterQuery(q url.Values, f changefeed.Filter) {
	for _, p := range f.Prefixes {
		q.Add(wire.ParamPrefix, p)
	}
	if len(f.Changes) > 0 {
		cs := make([]string, len(f.Changes))
		for i, c := range f.Changes {
			cs[i] = string(c)
		}
		q.Set(wire.ParamChange, strings.Join(cs, ","))
	}
}
