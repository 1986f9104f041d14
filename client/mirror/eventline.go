package mirror

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// String is the event as one line for a person to read: its kind, then
// what it concerns, with nothing printed for what the event lacks (no
// zero times, no empty parts) and counts in the singular where they are 1.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Kind)
	if e.Seq > 0 {
		fmt.Fprintf(&b, " seq=%d", e.Seq)
	}
	switch e.Kind {
	case EventNotification, EventDuplicate:
		fmt.Fprintf(&b, " [%s, %s]", readableTime(e.From), readableTime(e.Until))
		if e.Kind == EventNotification {
			b.WriteString(" " + Count(e.Entries, "entry", "entries"))
		}
	case EventGap:
		fmt.Fprintf(&b, " missing [%s, %s]", readableTime(e.From), readableTime(e.Until))
	case EventCatchUp:
		b.WriteString(" from the hub's Change Lists: " + Count(e.Total, "list", "lists"))
		if !e.From.IsZero() {
			b.WriteString(" since " + readableTime(e.From))
		}
	case EventCaughtUp:
		if !e.Until.IsZero() {
			b.WriteString(" to " + readableTime(e.Until) + ":")
		}
		fmt.Fprintf(&b, " %s in %s", Count(e.Entries, "entry", "entries"), e.Elapsed.Round(time.Millisecond))
	case EventProgress:
		fmt.Fprintf(&b, " %d/%d", e.Done, e.Total)
	case EventFile, EventSkipped, EventFramework:
		for _, part := range []string{e.Change, cmp.Or(e.Path, e.Loc)} {
			if part != "" {
				b.WriteString(" " + part)
			}
		}
	}
	if e.Message != "" {
		b.WriteString(" (" + e.Message + ")")
	}
	return b.String()
}

// readableTime is a Source time for a person; "no time" when there is none.
func readableTime(t time.Time) string {
	if t.IsZero() {
		return "no time"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Count is n followed by the noun, in the plural unless n is 1.
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
