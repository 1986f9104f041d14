package jslog

import (
	"encoding/base64"
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

// MaxHeaderValue bounds, in bytes, each record field carried in a header
// (topic, channel, content type, resourcesync link, key), as long as the
// hub's own limit on topic URIs (hub.MaxTopicLen). Append refuses a record
// with a longer one. Even all encoded, the headers then stay below
// JetStream's 64 KiB limit on a message's headers.
const MaxHeaderValue = 8 << 10

// The encoded form of a header value that cannot travel as it is: an RFC
// 2047 encoded word, "=?UTF-8?B?" then the standard base64 of the value's
// bytes then "?=".
const (
	encodedPrefix = "=?UTF-8?B?"
	encodedSuffix = "?="
)

// EncodeHeaders returns the headers that carry rec's metadata. A value
// that is not printable ASCII without leading or trailing spaces (CR, LF,
// NUL, other control characters, non-ASCII, invalid UTF-8), or that starts
// with "=?", is sent encoded (see the package documentation), so no value
// breaks or is altered by the NATS protocol; DecodeMsg reverses it.
func EncodeHeaders(rec hub.Record) nats.Header {
	h := nats.Header{}
	set := func(k, v string) {
		if v != "" {
			h[k] = []string{v}
		}
	}
	set(HeaderMsgID, EncodeHeaderValue(rec.Key))
	set(HeaderTopic, EncodeHeaderValue(rec.Topic))
	set(HeaderChannel, EncodeHeaderValue(rec.Channel))
	set(HeaderFrom, formatTime(rec.From))
	set(HeaderUntil, formatTime(rec.Until))
	set(HeaderContentType, EncodeHeaderValue(rec.ContentType))
	set(HeaderReceived, formatTime(rec.Received))
	set(HeaderResourceSync, EncodeHeaderValue(rec.ResourceSync))
	if rec.Entries > 0 {
		set(HeaderEntries, strconv.Itoa(rec.Entries))
	}
	return h
}

// EncodeHeaderValue returns v unchanged when it is safe as a NATS header
// value, otherwise its encoded form.
func EncodeHeaderValue(v string) string {
	if safeHeaderValue(v) {
		return v
	}
	return encodedPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + encodedSuffix
}

// DecodeHeaderValue reverses EncodeHeaderValue. A value starting with
// "=?" that is not an encoded form is an error.
func DecodeHeaderValue(v string) (string, error) {
	if !strings.HasPrefix(v, "=?") {
		return v, nil
	}
	if len(v) < len(encodedPrefix)+len(encodedSuffix) || !strings.EqualFold(v[:len(encodedPrefix)], encodedPrefix) || !strings.HasSuffix(v, encodedSuffix) {
		return "", fmt.Errorf("%q is not an encoded header value", hub.Truncate(v))
	}
	b, err := base64.StdEncoding.DecodeString(v[len(encodedPrefix) : len(v)-len(encodedSuffix)])
	if err != nil {
		return "", fmt.Errorf("encoded header value: %w", err)
	}
	return string(b), nil
}

// safeHeaderValue reports whether v travels through any NATS client as it
// is: printable ASCII, no leading or trailing space (they are trimmed),
// not starting like an encoded value.
func safeHeaderValue(v string) bool {
	if v == "" {
		return true
	}
	if v[0] == ' ' || v[len(v)-1] == ' ' || strings.HasPrefix(v, "=?") {
		return false
	}
	for i := range len(v) {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// checkHeaderValues refuses a record with a field too long for a header.
func checkHeaderValues(rec hub.Record) error {
	for _, f := range []struct{ name, v string }{
		{"key", rec.Key}, {"topic", rec.Topic}, {"channel", rec.Channel},
		{"content type", rec.ContentType}, {"resourcesync link", rec.ResourceSync},
	} {
		if len(f.v) > MaxHeaderValue {
			return fmt.Errorf("the %s is %d bytes; the limit is %d bytes", f.name, len(f.v), MaxHeaderValue)
		}
	}
	return nil
}

// DecodeMsg turns a log message into a Record with sequence seq. subject is
// the message subject; its last token names the channel when the
// Rshub-Channel header is missing.
func DecodeMsg(subject string, hdr nats.Header, data []byte, seq uint64) (hub.Record, error) {
	rec := hub.Record{Seq: seq, Body: data}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{HeaderTopic, &rec.Topic}, {HeaderChannel, &rec.Channel}, {HeaderContentType, &rec.ContentType},
		{HeaderResourceSync, &rec.ResourceSync}, {HeaderMsgID, &rec.Key},
	} {
		v, err := DecodeHeaderValue(hdr.Get(f.name))
		if err != nil {
			return hub.Record{}, fmt.Errorf("jslog: header %s: %w", f.name, err)
		}
		*f.dst = v
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
