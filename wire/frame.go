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
)

// Notification is the frame of one stored record. Type is
// FrameNotification.
type Notification struct {
	Type        string  `json:"type"`
	Channel     string  `json:"channel"`
	Topic       string  `json:"topic"`
	Seq         uint64  `json:"seq"`             // log sequence: the cursor to resume from
	From        string  `json:"from,omitempty"`  // RFC 3339 in UTC (FrameTime), absent when unknown
	Until       string  `json:"until,omitempty"` // same
	ContentType string  `json:"content_type"`
	Received    string  `json:"received,omitempty"` // same
	Entries     []Entry `json:"entries"`            // never null: [] when none
	XML         *string `json:"xml,omitempty"`      // the stored XML body, with raw=1
	Body        *string `json:"body,omitempty"`     // another stored body as text, with raw=1
	Error       string  `json:"error,omitempty"`    // why an XML body gave no entries
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
}

// GapFrame returns the JSON of a Gap frame.
func GapFrame(from, to uint64, message string) []byte {
	b, _ := json.Marshal(Gap{Type: FrameGap, From: from, To: to, Message: message}) // cannot fail
	return b
}

// LiveFrame returns the JSON of a Live frame.
func LiveFrame(seq uint64) []byte {
	b, _ := json.Marshal(Live{Type: FrameLive, Seq: seq}) // cannot fail
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
// Gap and Live that it names. A frame of a type this package does not know
// has only Type: clients ignore it.
type Frame struct {
	Type         string
	Notification *Notification
	Gap          *Gap
	Live         *Live
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
	default:
		return f, nil
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return Frame{}, fmt.Errorf("%s frame: %w", probe.Type, err)
	}
	return f, nil
}
