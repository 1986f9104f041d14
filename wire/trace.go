package wire

import "strings"

// Header names of the W3C Trace Context (https://www.w3.org/TR/trace-context/):
// taken from a publish request, stored with the record (a NATS header of
// the log) and sent on every webhook delivery.
const (
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// MaxTraceState bounds, in bytes, the tracestate a record keeps: the
// length every W3C Trace Context implementation must propagate. A longer
// one is dropped, not cut.
const MaxTraceState = 512

// maxTraceStateMembers is the W3C limit on tracestate list members.
const maxTraceStateMembers = 32

// CleanTrace returns traceparent and tracestate as a record keeps them:
// traceparent only when it is a well-formed W3C traceparent of version 00
// ("00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>", lower case,
// neither id all zeros), tracestate only when traceparent is kept and it is
// a well-formed list of at most 32 members in at most MaxTraceState bytes
// (then without white space and empty members). Anything else becomes "": a malformed trace context is dropped, never
// stored or sent on.
func CleanTrace(traceparent, tracestate string) (string, string) {
	if !validTraceParent(traceparent) {
		return "", ""
	}
	ts, ok := cleanTraceState(tracestate)
	if !ok {
		return traceparent, ""
	}
	return traceparent, ts
}

func validTraceParent(s string) bool {
	// 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	if s[:2] != "00" || !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:55]) {
		return false
	}
	return strings.Trim(s[3:35], "0") != "" && strings.Trim(s[36:52], "0") != ""
}

func lowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// cleanTraceState checks the W3C list (members "key=value" separated by
// commas, with optional spaces or tabs around them, empty members
// allowed) and returns it without the empty members and white space, so
// it travels unchanged in any header.
func cleanTraceState(s string) (string, bool) {
	if len(s) > MaxTraceState {
		return "", false
	}
	var b strings.Builder
	n := 0
	for m := range strings.SplitSeq(s, ",") {
		m = strings.Trim(m, " \t")
		if m == "" {
			continue
		}
		if n++; n > maxTraceStateMembers {
			return "", false
		}
		k, v, ok := strings.Cut(m, "=")
		if !ok || !validTraceKey(k) || !validTraceValue(v) {
			return "", false
		}
		if n > 1 {
			b.WriteByte(',')
		}
		b.WriteString(m)
	}
	return b.String(), true
}

// validTraceKey: a simple key, or "tenant@system" for multi-tenant vendors.
func validTraceKey(k string) bool {
	tenant, system, multi := strings.Cut(k, "@")
	if !multi {
		return keyPart(k, 256, false)
	}
	return keyPart(tenant, 241, true) && keyPart(system, 14, false)
}

// keyPart: lcalpha (or a digit when digitFirst) then up to max-1 of
// lcalpha, digits, "_", "-", "*", "/".
func keyPart(s string, max int, digitFirst bool) bool {
	if s == "" || len(s) > max {
		return false
	}
	if c := s[0]; !(c >= 'a' && c <= 'z') && !(digitFirst && c >= '0' && c <= '9') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '_' && c != '-' && c != '*' && c != '/' {
			return false
		}
	}
	return true
}

// validTraceValue: 1 to 256 printable ASCII characters except "," and "=",
// not ending in a space.
func validTraceValue(v string) bool {
	if v == "" || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := range len(v) {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

// TraceCarrier reads and writes a record's trace context by header name:
// it is an OpenTelemetry propagation.TextMapCarrier (Get, Set, Keys), so
// the hub extracts a record's context with the W3C propagator and injects
// a span's into the record. Set keeps only what CleanTrace keeps.
type TraceCarrier struct{ Rec *Record }

// Get returns the record's traceparent or tracestate, "" for other keys.
func (c TraceCarrier) Get(key string) string {
	switch key {
	case HeaderTraceParent:
		return c.Rec.TraceParent
	case HeaderTraceState:
		return c.Rec.TraceState
	}
	return ""
}

// Set stores a traceparent or a tracestate when well-formed, and drops it
// otherwise; other keys are ignored.
func (c TraceCarrier) Set(key, value string) {
	switch key {
	case HeaderTraceParent:
		c.Rec.TraceParent, _ = CleanTrace(value, "")
	case HeaderTraceState:
		c.Rec.TraceState, _ = cleanTraceState(value)
	}
}

// Keys returns the header names of the record's trace context.
func (c TraceCarrier) Keys() []string { return []string{HeaderTraceParent, HeaderTraceState} }
