package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

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

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// line is an event as one plain line.
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
			fmt.Fprintf(&b, " %d entries", e.Entries)
		}
	case mirror.EventGap:
		fmt.Fprintf(&b, " missing [%s, %s]", ts(e.From), ts(e.Until))
	case mirror.EventCatchUp:
		fmt.Fprintf(&b, " %d change lists from %s", e.Total, ts(e.From))
	case mirror.EventCaughtUp:
		fmt.Fprintf(&b, " to %s: %d entries in %s", ts(e.Until), e.Entries, e.Elapsed.Round(time.Millisecond))
	case mirror.EventProgress:
		fmt.Fprintf(&b, " %d/%d", e.Done, e.Total)
	case mirror.EventFile, mirror.EventSkipped:
		fmt.Fprintf(&b, " %s %s", e.Change, e.Path)
		if e.Path == "" {
			b.WriteString(e.Loc)
		}
	}
	if e.Message != "" {
		b.WriteString(" (" + e.Message + ")")
	}
	return b.String()
}
