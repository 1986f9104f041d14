package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// Types of the WebSocket frames the hub sends: the "type" of each JSON
// object.
const (
	FrameNotification = "notification"
	FrameGap          = "gap"
	FrameLive         = "live"
	FrameReset        = "reset"
)

// Notification is the frame of one stored record. Type is
// FrameNotification.
type Notification struct {
	Type        string  `json:"type"`
	Channel     string  `json:"channel"`
	Topic       string  `json:"topic"`
	Seq         uint64  `json:"seq"`             // log sequence: the cursor to resume from
	ID          string  `json:"id,omitempty"`    // the cursor with the log's epoch (Cursor), absent when the log has none
	From        string  `json:"from,omitempty"`  // RFC 3339 in UTC (FrameTime), absent when unknown
	Until       string  `json:"until,omitempty"` // same
	ContentType string  `json:"content_type"`
	Received    string  `json:"received,omitempty"`    // same
	Entries     []Entry `json:"entries"`               // never null: [] when none
	XML         *string `json:"xml,omitempty"`         // the stored XML body, with raw=1
	Body        *string `json:"body,omitempty"`        // another stored body as text, with raw=1
	Error       string  `json:"error,omitempty"`       // why an XML body gave no entries
	TraceParent string  `json:"traceparent,omitempty"` // the record's W3C trace context (Record.TraceParent)
	TraceState  string  `json:"tracestate,omitempty"`
}

// Entry is one <url> entry of a ResourceSync notification, as the Source
// wrote it.
type Entry struct {
	Loc      string `json:"loc"`
	Change   string `json:"change,omitempty"`
	DateTime string `json:"datetime,omitempty"`
	LastMod  string `json:"lastmod,omitempty"`
	Hash     string `json:"hash,omitempty"`
	Length   *int64 `json:"length,omitempty"`
	Type     string `json:"type,omitempty"`
}

// Gap is the frame announcing log sequences the hub can no longer
// deliver, From to To inclusive. Type is FrameGap.
type Gap struct {
	Type    string `json:"type"`
	From    uint64 `json:"missing_from_seq"`
	To      uint64 `json:"missing_to_seq"`
	Message string `json:"message"`
}

// Live is the frame saying that replay has caught up: every record up to
// Seq has been sent and every later frame is live. Type is FrameLive.
type Live struct {
	Type string `json:"type"`
	Seq  uint64 `json:"seq"`
	ID   string `json:"id,omitempty"` // Seq as a Cursor with the log's epoch, absent when the log has none
}

// Reset is the frame telling a client that the cursor it gave (since,
// Last-Event-ID) names no position of this log: it is ahead of the log's
// end, or from another log (another Epoch: the log was rebuilt). Whatever
// the client derived from its old position is not this log's: a dashboard
// clears its view, a mirror keeps its files but takes the new cursor. The
// session then goes on from the log's first record: every record the log
// holds follows, then the live frame. Since and ID are that new starting
// cursor. Type is FrameReset.
type Reset struct {
	Type    string `json:"type"`
	Epoch   string `json:"epoch"`     // the log's identity, "" when it has none
	First   uint64 `json:"first_seq"` // the log's first and last sequence (0, 0: empty)
	Last    uint64 `json:"last_seq"`
	Since   uint64 `json:"since"` // replay goes on after it: First-1
	ID      string `json:"id"`    // Since as a Cursor with Epoch
	Message string `json:"message"`
}

// GapFrame returns the JSON of a Gap frame.
func GapFrame(from, to uint64, message string) []byte {
	b, _ := json.Marshal(Gap{Type: FrameGap, From: from, To: to, Message: message}) // cannot fail
	return b
}

// LiveFrame returns the JSON of a Live frame at seq of the log epoch.
func LiveFrame(epoch string, seq uint64) []byte {
	l := Live{Type: FrameLive, Seq: seq}
	if epoch != "" {
		l.ID = Cursor{epoch, seq}.String()
	}
	b, _ := json.Marshal(l) // cannot fail
	return b
}

// ResetFrame returns the JSON of the Reset frame of a log with identity
// epoch holding first..last, for a session that goes on from first;
// message says why.
func ResetFrame(epoch string, first, last uint64, message string) []byte {
	since := max(first, 1) - 1
	b, _ := json.Marshal(Reset{Type: FrameReset, Epoch: epoch, First: first, Last: last, // cannot fail
		Since: since, ID: Cursor{epoch, since}.String(), Message: message})
	return b
}

// FrameTime formats a time of a frame: RFC 3339 with nanoseconds in UTC,
// "" for the zero time.
func FrameTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Frame is a frame as a client reads it: Type and the one of Notification,
// Gap, Live and Reset that it names. A frame of a type this package does not know
// has only Type: clients ignore it.
type Frame struct {
	Type         string
	Notification *Notification
	Gap          *Gap
	Live         *Live
	Reset        *Reset
}

// DecodeFrame reads one data frame from the hub.
func DecodeFrame(data []byte) (Frame, error) {
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return Frame{}, fmt.Errorf("frame: %w", err)
	}
	f := Frame{Type: probe.Type}
	var dst any
	switch probe.Type {
	case FrameNotification:
		f.Notification = new(Notification)
		dst = f.Notification
	case FrameGap:
		f.Gap = new(Gap)
		dst = f.Gap
	case FrameLive:
		f.Live = new(Live)
		dst = f.Live
	case FrameReset:
		f.Reset = new(Reset)
		dst = f.Reset
	default:
		return f, nil
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return Frame{}, fmt.Errorf("%s frame: %w", probe.Type, err)
	}
	return f, nil
}
