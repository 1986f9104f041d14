package delivery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

// wsNotification is the JSON envelope of one notification on a WebSocket.
// See websocket.md.
type wsNotification struct {
	Type        string    `json:"type"` // "notification"
	Channel     string    `json:"channel"`
	Topic       string    `json:"topic"`
	Seq         uint64    `json:"seq"`
	From        string    `json:"from,omitempty"`
	Until       string    `json:"until,omitempty"`
	ContentType string    `json:"content_type"`
	Received    string    `json:"received,omitempty"`
	Entries     []wsEntry `json:"entries"`
	XML         *string   `json:"xml,omitempty"`
	Body        *string   `json:"body,omitempty"`
	Error       string    `json:"error,omitempty"`
}

// wsEntry is one <url> of a ResourceSync notification.
type wsEntry struct {
	Loc      string `json:"loc"`
	Change   string `json:"change,omitempty"`
	DateTime string `json:"datetime,omitempty"`
	LastMod  string `json:"lastmod,omitempty"`
	Hash     string `json:"hash,omitempty"`
	Length   *int64 `json:"length,omitempty"`
	Type     string `json:"type,omitempty"`
}

// wsGap announces sequences the hub can no longer deliver.
type wsGap struct {
	Type    string `json:"type"` // "gap"
	From    uint64 `json:"missing_from_seq"`
	To      uint64 `json:"missing_to_seq"`
	Message string `json:"message"`
}

// wsLive says that replay has caught up: every later frame is live.
type wsLive struct {
	Type string `json:"type"` // "live"
	Seq  uint64 `json:"seq"`
}

// isXML reports whether a content type is an XML media type, which the
// WebSocket transport parses as a ResourceSync document.
func isXML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml")
}

// notificationJSON encodes rec as a notification frame; raw adds the stored
// body. XML bodies are parsed leniently for their entries; a parse failure
// leaves entries empty and sets error.
func notificationJSON(rec hub.Record, raw bool) ([]byte, error) {
	n := wsNotification{
		Type:        "notification",
		Channel:     rec.Channel,
		Topic:       rec.Topic,
		Seq:         rec.Seq,
		From:        formatFrameTime(rec.From),
		Until:       formatFrameTime(rec.Until),
		ContentType: rec.ContentType,
		Received:    formatFrameTime(rec.Received),
		Entries:     []wsEntry{},
	}
	if isXML(rec.ContentType) {
		doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Lenient})
		if err != nil {
			n.Error = fmt.Sprintf("entries not parsed: %v", err)
		} else {
			n.Entries = entriesOf(doc)
		}
		if raw {
			s := string(rec.Body)
			n.XML = &s
		}
	} else if raw {
		s := string(rec.Body) // invalid UTF-8 becomes U+FFFD
		n.Body = &s
	}
	b, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("websocket: encode seq %d: %w", rec.Seq, err)
	}
	return b, nil
}

func entriesOf(doc *changefeed.Document) []wsEntry {
	out := make([]wsEntry, 0, len(doc.Entries))
	for i := range doc.Entries {
		e := &doc.Entries[i]
		we := wsEntry{Loc: e.Loc, LastMod: e.LastMod.Raw}
		if md := e.MD; md != nil {
			we.Change = string(md.Change)
			we.DateTime = md.DateTime.Raw
			we.Hash = md.Hash
			we.Type = md.Type
			if md.Length >= 0 {
				l := md.Length
				we.Length = &l
			}
		}
		out = append(out, we)
	}
	return out
}

func gapJSON(from, to uint64, message string) []byte {
	b, _ := json.Marshal(wsGap{Type: "gap", From: from, To: to, Message: message})
	return b
}

func liveJSON(seq uint64) []byte {
	b, _ := json.Marshal(wsLive{Type: "live", Seq: seq})
	return b
}

func formatFrameTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
