package wire

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Header names of a stored record (a NATS message of the log) and of a
// webhook delivery. See the package documentation.
const (
	HeaderMsgID        = "Nats-Msg-Id"        // idempotency key
	HeaderTopic        = "Rshub-Topic"        // topic URI
	HeaderChannel      = "Rshub-Channel"      // channel name
	HeaderFrom         = "Rshub-From"         // ResourceSync from, RFC 3339 with nanoseconds
	HeaderUntil        = "Rshub-Until"        // ResourceSync until, RFC 3339 with nanoseconds
	HeaderContentType  = "Content-Type"       // media type of the body
	HeaderReceived     = "Rshub-Received"     // when the hub accepted it, RFC 3339 with nanoseconds
	HeaderResourceSync = "Rshub-Resourcesync" // rel="resourcesync" link the Source sent
	HeaderEntries      = "Rshub-Entries"      // <url> entries, decimal
	HeaderPrivate      = "Rshub-Private"      // "1": stored while its channel was private
	// HeaderSeq carries the log sequence of a record: on each webhook
	// delivery (the subscriber's cursor) and on the answer to a publish.
	HeaderSeq = "Rshub-Seq"
)

// MaxHeaderValue bounds, in bytes, each record field carried in a header
// (topic, channel, content type, resourcesync link, key): as long as the
// hub's own limit on topic URIs. Even all encoded, the headers of a record
// then stay below JetStream's 64 KiB limit on a message's headers.
const MaxHeaderValue = 8 << 10

// The encoded form of a header value that cannot travel as it is: an RFC
// 2047 encoded word, "=?UTF-8?B?" then the standard base64 of the value's
// bytes then "?=".
const (
	encodedPrefix = "=?UTF-8?B?"
	encodedSuffix = "?="
)

// Header is a message's header block, values by name, as nats.Header is
// (convert one with wire.Header(h)). Names are case-sensitive, as NATS
// headers are.
type Header map[string][]string

// Get returns the first value of the header named exactly key, or "".
func (h Header) Get(key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// EncodeRecord returns the headers that carry rec's metadata. A value that
// is not printable ASCII without leading or trailing spaces, or that starts
// with "=?", is sent encoded (EncodeHeaderValue); DecodeRecord reverses it.
// Empty values are left out. Call CheckRecord first to refuse values over
// MaxHeaderValue.
func EncodeRecord(rec Record) Header {
	h := Header{}
	set := func(k, v string) {
		if v != "" {
			h[k] = []string{v}
		}
	}
	set(HeaderMsgID, EncodeHeaderValue(rec.Key))
	set(HeaderTopic, EncodeHeaderValue(rec.Topic))
	set(HeaderChannel, EncodeHeaderValue(rec.Channel))
	set(HeaderFrom, FormatTime(rec.From))
	set(HeaderUntil, FormatTime(rec.Until))
	set(HeaderContentType, EncodeHeaderValue(rec.ContentType))
	set(HeaderReceived, FormatTime(rec.Received))
	set(HeaderResourceSync, EncodeHeaderValue(rec.ResourceSync))
	if rec.Entries > 0 {
		set(HeaderEntries, strconv.Itoa(rec.Entries))
	}
	if rec.Private {
		set(HeaderPrivate, "1")
	}
	tp, ts := CleanTrace(rec.TraceParent, rec.TraceState)
	set(HeaderTraceParent, tp)
	set(HeaderTraceState, ts)
	return h
}

// CheckRecord refuses a record with a field longer than MaxHeaderValue.
func CheckRecord(rec Record) error {
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

// DecodeRecord turns a stored message back into a Record with sequence
// seq and body data, decoding encoded values. subject is the message's
// subject: its channel (SubjectChannel) names the record's channel when
// the Rshub-Channel header is missing.
func DecodeRecord(subject string, hdr Header, data []byte, seq uint64) (Record, error) {
	rec := Record{Seq: seq, Body: data}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{HeaderTopic, &rec.Topic}, {HeaderChannel, &rec.Channel}, {HeaderContentType, &rec.ContentType},
		{HeaderResourceSync, &rec.ResourceSync}, {HeaderMsgID, &rec.Key},
	} {
		v, err := DecodeHeaderValue(hdr.Get(f.name))
		if err != nil {
			return Record{}, fmt.Errorf("header %s: %w", f.name, err)
		}
		*f.dst = v
	}
	if rec.Channel == "" {
		rec.Channel = SubjectChannel(subject)
	}
	rec.Private = hdr.Get(HeaderPrivate) == "1"
	// a malformed trace context is dropped, not an undecodable record
	rec.TraceParent, rec.TraceState = CleanTrace(hdr.Get(HeaderTraceParent), hdr.Get(HeaderTraceState))
	var err error
	if rec.From, err = parseTimeHeader(hdr, HeaderFrom); err != nil {
		return Record{}, err
	}
	if rec.Until, err = parseTimeHeader(hdr, HeaderUntil); err != nil {
		return Record{}, err
	}
	if rec.Received, err = parseTimeHeader(hdr, HeaderReceived); err != nil {
		return Record{}, err
	}
	if v := hdr.Get(HeaderEntries); v != "" {
		if rec.Entries, err = strconv.Atoi(v); err != nil || rec.Entries < 0 {
			return Record{}, fmt.Errorf("header %s: %q is not an entry count", HeaderEntries, v)
		}
	}
	return rec, nil
}

// EncodeHeaderValue returns v unchanged when it is safe as a NATS header
// value, otherwise its RFC 2047 encoded form "=?UTF-8?B?<base64>?=".
func EncodeHeaderValue(v string) string {
	if safeHeaderValue(v) {
		return v
	}
	return encodedPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + encodedSuffix
}

// DecodeHeaderValue reverses EncodeHeaderValue. A value starting with "=?"
// that is not an encoded form is an error.
func DecodeHeaderValue(v string) (string, error) {
	if !strings.HasPrefix(v, "=?") {
		return v, nil
	}
	if len(v) < len(encodedPrefix)+len(encodedSuffix) || !strings.EqualFold(v[:len(encodedPrefix)], encodedPrefix) || !strings.HasSuffix(v, encodedSuffix) {
		return "", fmt.Errorf("%q is not an encoded header value", Clip(v))
	}
	b, err := base64.StdEncoding.DecodeString(v[len(encodedPrefix) : len(v)-len(encodedSuffix)])
	if err != nil {
		return "", fmt.Errorf("encoded header value: %w", err)
	}
	return string(b), nil
}

// safeHeaderValue reports whether v travels through any NATS client as it
// is: printable ASCII, no leading or trailing space (they are trimmed), not
// starting like an encoded value.
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

// FormatTime formats a time of a header: RFC 3339 with nanoseconds, "" for
// the zero time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func parseTimeHeader(hdr Header, name string) (time.Time, error) {
	v := hdr.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("header %s: %w", name, err)
	}
	return t, nil
}

// Clip bounds a string a client chose for an error message or a log line:
// at most 256 bytes, cut on a rune boundary, followed by "…" and the
// original length when cut. It is the one clipping of the module (the
// server clips with it).
func Clip(s string) string {
	const keep = 256
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
