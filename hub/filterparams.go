package hub

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// ParseFilterParams reads an entry filter from the values of its two
// parameters, as every door takes them (a subscription's
// wire.ParamFilterPrefix and wire.ParamFilterChange, a session's
// wire.ParamPrefix and wire.ParamChange): prefixes holds one prefix per
// value, changes one comma-separated list of change types per value. An
// absent parameter leaves its axis unfiltered; a present one must say
// something, so an empty prefix, an empty list or an empty item of a list
// is refused rather than read as "no filter". Prefixes must be absolute
// http(s) URIs with a host, without spaces or control characters, at most
// changefeed.MaxFilterPrefixes of at most changefeed.MaxFilterPrefixLen
// bytes; change types are created, updated and deleted. Repeated values
// are kept once, in the order first given. Errors name the parameter by
// its role ("prefix", "change"); the caller adds its own parameter name.
func ParseFilterParams(prefixes, changes []string) (changefeed.Filter, error) {
	var f changefeed.Filter
	if len(prefixes) > changefeed.MaxFilterPrefixes {
		return changefeed.Filter{}, fmt.Errorf("prefix: given %d times; at most %d", len(prefixes), changefeed.MaxFilterPrefixes)
	}
	for _, p := range prefixes {
		if err := checkFilterPrefix(p); err != nil {
			return changefeed.Filter{}, fmt.Errorf("prefix: %w", err)
		}
		if !slices.Contains(f.Prefixes, p) {
			f.Prefixes = append(f.Prefixes, p)
		}
	}
	for _, list := range changes {
		for c := range strings.SplitSeq(list, ",") {
			switch c := changefeed.Change(strings.TrimSpace(c)); c {
			case changefeed.Created, changefeed.Updated, changefeed.Deleted:
				if !slices.Contains(f.Changes, c) {
					f.Changes = append(f.Changes, c)
				}
			case "":
				return changefeed.Filter{}, fmt.Errorf("change: %q has an empty item; give created, updated and/or deleted, comma-separated", wire.Clip(list))
			default:
				return changefeed.Filter{}, fmt.Errorf("change: %q is not created, updated or deleted", wire.Clip(string(c)))
			}
		}
	}
	return f, nil
}

// checkFilterPrefix accepts an absolute http(s) URI prefix with a host.
func checkFilterPrefix(p string) error {
	if p == "" {
		return fmt.Errorf("empty; give an absolute http(s) URI prefix, or leave the parameter out")
	}
	if len(p) > changefeed.MaxFilterPrefixLen {
		return fmt.Errorf("%d bytes; at most %d", len(p), changefeed.MaxFilterPrefixLen)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("%q holds a space or control character; percent-encode it", wire.Clip(p))
		}
	}
	rest, ok := strings.CutPrefix(p, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(p, "https://")
	}
	if !ok || rest == "" || strings.IndexByte("/?#@:", rest[0]) >= 0 {
		return fmt.Errorf("%q is not an absolute http(s) URI prefix with a host (the scheme in lower case, as locs are matched byte for byte)", wire.Clip(p))
	}
	return nil
}
