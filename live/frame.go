package live

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// notificationJSON encodes rec as a wire.Notification frame; raw adds the
// stored body. XML bodies are parsed leniently for their entries; a parse
// failure leaves entries empty and sets error. A filter that is not zero
// keeps only the entries it selects (from and until stay), and the raw XML
// is then the filtered document.
func notificationJSON(rec wire.Record, raw bool, filter changefeed.Filter) ([]byte, error) {
	n := wire.Notification{
		Type:        wire.FrameNotification,
		Channel:     rec.Channel,
		Topic:       rec.Topic,
		Seq:         rec.Seq,
		ID:          recordID(rec),
		From:        wire.FrameTime(rec.From),
		Until:       wire.FrameTime(rec.Until),
		ContentType: rec.ContentType,
		Received:    wire.FrameTime(rec.Received),
		Entries:     []wire.Entry{},
		TraceParent: rec.TraceParent,
		TraceState:  rec.TraceState,
	}
	if rec.IsXML() {
		body := rec.Body
		doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Lenient})
		if err != nil {
			n.Error = fmt.Sprintf("entries not parsed: %v", err)
		} else {
			if !filter.IsZero() {
				doc = filter.Apply(doc)
				if raw {
					var buf bytes.Buffer
					if err := changefeed.Encode(&buf, doc); err != nil {
						return nil, fmt.Errorf("websocket: encode filtered seq %d: %w", rec.Seq, err)
					}
					body = buf.Bytes()
				}
			}
			n.Entries = entriesOf(doc)
		}
		if raw {
			s := string(body)
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

func entriesOf(doc *changefeed.Document) []wire.Entry {
	out := make([]wire.Entry, 0, len(doc.Entries))
	for i := range doc.Entries {
		e := &doc.Entries[i]
		we := wire.Entry{Loc: e.Loc, LastMod: e.LastMod.Raw}
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
