package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rshub/rshub/client/dataset"
	"github.com/rshub/rshub/client/mirror"
)

// printer writes the mirror's events: JSON objects, plain lines, or plain
// lines with a progress bar redrawn in place for catch-ups.
type printer struct {
	mu     sync.Mutex
	out    io.Writer
	json   bool
	bar    bool
	barred bool // a bar is drawn on the current line
}

// event prints one event.
func (p *printer) event(e mirror.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		_ = json.NewEncoder(p.out).Encode(e)
		return
	}
	if e.Kind == mirror.EventProgress && p.bar {
		fmt.Fprintf(p.out, "\r%s", progressBar(e.Done, e.Total, 30, e.Message))
		p.barred = true
		return
	}
	if p.barred {
		fmt.Fprint(p.out, "\r\033[K")
		p.barred = false
	}
	fmt.Fprintln(p.out, line(e))
}

// progressBar draws "[#####.....]  5/10 what".
func progressBar(done, total, width int, what string) string {
	if total <= 0 {
		total = 1
	}
	done = min(max(done, 0), total)
	n := done * width / total
	return fmt.Sprintf("[%s%s] %d/%d %s", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, what)
}

// ts is a Source time for a person; "no time" when there is none.
func ts(t time.Time) string {
	if t.IsZero() {
		return "no time"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// count is n followed by the noun, in the plural unless n is 1.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// line is an event as one plain line for a person to read: what happened,
// then what it concerns, with nothing printed for what the event lacks.
func line(e mirror.Event) string {
	var b strings.Builder
	b.WriteString(e.Time.Format("15:04:05 "))
	b.WriteString(e.Kind)
	if e.Seq > 0 {
		fmt.Fprintf(&b, " seq=%d", e.Seq)
	}
	switch e.Kind {
	case mirror.EventNotification, mirror.EventDuplicate:
		fmt.Fprintf(&b, " [%s, %s]", ts(e.From), ts(e.Until))
		if e.Kind == mirror.EventNotification {
			b.WriteString(" " + count(e.Entries, "entry", "entries"))
		}
	case mirror.EventGap:
		fmt.Fprintf(&b, " missing [%s, %s]", ts(e.From), ts(e.Until))
	case mirror.EventCatchUp:
		b.WriteString(" from the hub's Change Lists: " + count(e.Total, "list", "lists"))
		if !e.From.IsZero() {
			b.WriteString(" since " + ts(e.From))
		}
	case mirror.EventCaughtUp:
		if !e.Until.IsZero() {
			b.WriteString(" to " + ts(e.Until) + ":")
		}
		fmt.Fprintf(&b, " %s in %s", count(e.Entries, "entry", "entries"), e.Elapsed.Round(time.Millisecond))
	case mirror.EventProgress:
		fmt.Fprintf(&b, " %d/%d", e.Done, e.Total)
	case dataset.EventPatch:
		fmt.Fprintf(&b, " applied %s: %s, the dataset holds %s", e.Path, count(e.Entries, "change", "changes"), count(e.Total, "quad", "quads"))
	case mirror.EventFile, mirror.EventSkipped:
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
