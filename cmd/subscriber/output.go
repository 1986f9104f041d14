package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

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
	total = max(total, 1)
	done = min(max(done, 0), total)
	n := done * width / total
	return fmt.Sprintf("[%s%s] %d/%d %s", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, what)
}

// line is an event as one plain line for a person to read, after its
// time of day.
func line(e mirror.Event) string {
	if e.Kind == dataset.EventPatch {
		return fmt.Sprintf("%s patch applied %s: %s, the dataset holds %s", e.Time.Format("15:04:05"), e.Path, mirror.Count(e.Entries, "change", "changes"), mirror.Count(e.Total, "quad", "quads"))
	}
	return e.Time.Format("15:04:05 ") + e.String()
}
