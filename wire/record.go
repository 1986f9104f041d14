package wire

import (
	"mime"
	"strings"
	"time"
)

// Record is one notification as the hub's log stores it and as every
// transport describes it: the stored body and its metadata. On NATS the
// metadata travels in headers (EncodeRecord, DecodeRecord); on a WebSocket
// in a Notification frame; on a webhook in the Link, Content-Type and
// Rshub-Seq headers of the POST.
type Record struct {
	Seq          uint64    `json:"seq"` // log sequence, assigned by the log on append
	Topic        string    `json:"topic"`
	Channel      string    `json:"channel"` // channel name
	From         time.Time `json:"from"`    // zero for non-ResourceSync content
	Until        time.Time `json:"until"`
	ContentType  string    `json:"contentType"`
	ResourceSync string    `json:"resourcesync,omitempty"` // rel="resourcesync" link passed through
	Received     time.Time `json:"received"`
	Key          string    `json:"key"`     // idempotency key
	Entries      int       `json:"entries"` // <url> entries of a ResourceSync notification (0 otherwise)
	Body         []byte    `json:"-"`
	// TraceParent and TraceState are the W3C trace context of the
	// notification's intake (CleanTrace: well-formed or ""), carried into
	// every delivery of it.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
	// Private is set when the channel was private when the record was
	// stored: live sessions keep it from readers without a token covering
	// Topic even after the channel is deleted.
	Private bool `json:"-"`
	// Epoch is the identity of the log the record was read from (see
	// Cursor), not stored with it; "" for a log without one.
	Epoch string `json:"-"`
}

// IsXML reports whether the record's content type is an XML media type:
// a body the hub's transports parse as a ResourceSync document (for its
// entries, filters, coalescing and Atom).
func (r *Record) IsXML() bool {
	mt, _, err := mime.ParseMediaType(r.ContentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(r.ContentType))
	}
	return mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml")
}
