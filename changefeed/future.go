package changefeed

import (
	"fmt"
	"time"
)

// CheckNotAfter reports the first time in doc later than latest as a
// *ValidationError with RuleFuture naming the attribute: the root rs:md from
// and until, then each entry's change time (rs:md datetime, else lastmod,
// the time a Change List entry is ordered and published by). A Source's
// clock may run ahead of the caller's by a little; the caller passes its
// clock plus that allowance. A time far in the future would otherwise
// become a channel's continuity anchor and make every correctly dated
// notification after it look out of order.
func CheckNotAfter(doc *Document, latest time.Time) error {
	if doc == nil {
		return nil
	}
	for _, d := range [...]struct {
		dt   DateTime
		name string
	}{{doc.MD.From, "from"}, {doc.MD.Until, "until"}} {
		if !d.dt.IsZero() && d.dt.Time.After(latest) {
			return futureErr(-1, "root rs:md "+d.name, d.dt, latest)
		}
	}
	for i := range doc.Entries {
		e := &doc.Entries[i]
		switch {
		case e.MD != nil && !e.MD.DateTime.IsZero():
			if e.MD.DateTime.Time.After(latest) {
				return futureErr(i, "rs:md datetime", e.MD.DateTime, latest)
			}
		case !e.LastMod.IsZero() && e.LastMod.Time.After(latest):
			return futureErr(i, "lastmod", e.LastMod, latest)
		}
	}
	return nil
}

func futureErr(idx int, field string, dt DateTime, latest time.Time) error {
	return verr(RuleFuture, idx, 0, fmt.Sprintf("%s %s is in the future: after %s, the latest time accepted",
		field, clipS(dt.Raw), latest.UTC().Format(time.RFC3339)))
}
