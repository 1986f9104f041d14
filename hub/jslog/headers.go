package jslog

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/hub"
)

// Header names of a log message. See the package documentation.
const (
	HeaderMsgID        = "Nats-Msg-Id"
	HeaderTopic        = "Rshub-Topic"
	HeaderChannel      = "Rshub-Channel"
	HeaderFrom         = "Rshub-From"
	HeaderUntil        = "Rshub-Until"
	HeaderContentType  = "Content-Type"
	HeaderReceived     = "Rshub-Received"
	HeaderResourceSync = "Rshub-Resourcesync"
	HeaderEntries      = "Rshub-Entries"
)

// EncodeHeaders returns the headers that carry rec's metadata.
func EncodeHeaders(rec hub.Record) nats.Header {
	h := nats.Header{}
	set := func(k, v string) {
		if v != "" {
			h[k] = []string{v}
		}
	}
	set(HeaderMsgID, rec.Key)
	set(HeaderTopic, rec.Topic)
	set(HeaderChannel, rec.Channel)
	set(HeaderFrom, formatTime(rec.From))
	set(HeaderUntil, formatTime(rec.Until))
	set(HeaderContentType, rec.ContentType)
	set(HeaderReceived, formatTime(rec.Received))
	set(HeaderResourceSync, rec.ResourceSync)
	if rec.Entries > 0 {
		set(HeaderEntries, strconv.Itoa(rec.Entries))
	}
	return h
}

// DecodeMsg turns a log message into a Record with sequence seq. subject is
// the message subject; its last token names the channel when the
// Rshub-Channel header is missing.
func DecodeMsg(subject string, hdr nats.Header, data []byte, seq uint64) (hub.Record, error) {
	rec := hub.Record{
		Seq:          seq,
		Topic:        hdr.Get(HeaderTopic),
		Channel:      hdr.Get(HeaderChannel),
		ContentType:  hdr.Get(HeaderContentType),
		ResourceSync: hdr.Get(HeaderResourceSync),
		Key:          hdr.Get(HeaderMsgID),
		Body:         data,
	}
	if rec.Channel == "" {
		rec.Channel = subject[strings.LastIndexByte(subject, '.')+1:]
	}
	var err error
	if rec.From, err = parseTime(hdr, HeaderFrom); err != nil {
		return hub.Record{}, err
	}
	if rec.Until, err = parseTime(hdr, HeaderUntil); err != nil {
		return hub.Record{}, err
	}
	if rec.Received, err = parseTime(hdr, HeaderReceived); err != nil {
		return hub.Record{}, err
	}
	if v := hdr.Get(HeaderEntries); v != "" {
		if rec.Entries, err = strconv.Atoi(v); err != nil || rec.Entries < 0 {
			return hub.Record{}, fmt.Errorf("jslog: header %s: %q is not an entry count", HeaderEntries, v)
		}
	}
	return rec, nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func parseTime(hdr nats.Header, name string) (time.Time, error) {
	v := hdr.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("jslog: header %s: %w", name, err)
	}
	return t, nil
}
