package wire

import (
	"strings"
	"testing"
)

const (
	validTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	validTS = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
)

// TestCleanTrace_KeepsOnlyWellFormed: a traceparent that is not a
// well-formed version-00 W3C traceparent is dropped with its tracestate; a
// malformed or oversized tracestate is dropped alone.
func TestCleanTrace_KeepsOnlyWellFormed(t *testing.T) {
	many := strings.Repeat("a=1,", 33)
	for _, c := range []struct {
		name, tp, ts, wantTP, wantTS string
	}{
		{"both well-formed", validTP, validTS, validTP, validTS},
		{"no tracestate", validTP, "", validTP, ""},
		{"multi-tenant key and white space", validTP, " t@sys=v ,\tx=y ,", validTP, "t@sys=v,x=y"},
		{"empty", "", validTS, "", ""},
		{"upper-case hex", strings.ToUpper(validTP), validTS, "", ""},
		{"version ff", "ff" + validTP[2:], "", "", ""},
		{"future version", "01" + validTP[2:], "", "", ""},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", "", ""},
		{"zero parent id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "", "", ""},
		{"too long", validTP + "-00", "", "", ""},
		{"wrong separator", strings.Replace(validTP, "-", "_", 1), "", "", ""},
		{"not hex", strings.Replace(validTP, "4b", "zz", 1), "", "", ""},
		{"CRLF injection", validTP[:54] + "\n", "", "", ""},
		{"tracestate with a newline", validTP, "a=b\r\nx: y", validTP, ""},
		{"tracestate key upper case", validTP, "Rojo=1", validTP, ""},
		{"tracestate value with =", validTP, "a=b=c", validTP, ""},
		{"tracestate without =", validTP, "abc", validTP, ""},
		{"tracestate over 32 members", validTP, many, validTP, ""},
		{"tracestate over 512 bytes", validTP, "a=" + strings.Repeat("x", 256) + ",b=" + strings.Repeat("y", 256), validTP, ""},
		{"tracestate value over 256", validTP, "a=" + strings.Repeat("x", 257), validTP, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tp, ts := CleanTrace(c.tp, c.ts)
			if tp != c.wantTP || ts != c.wantTS {
				t.Fatalf("CleanTrace(%q, %q) = %q, %q; want %q, %q", c.tp, c.ts, tp, ts, c.wantTP, c.wantTS)
			}
		})
	}
}

// TestRecordHeaders_TraceContextRoundTripsAndMalformedIsDropped: the trace
// context travels in the record's NATS headers; a malformed one read from
// the log is dropped and the record still decodes.
func TestRecordHeaders_TraceContextRoundTripsAndMalformedIsDropped(t *testing.T) {
	rec := Record{Topic: "http://s/t", Channel: "c", TraceParent: validTP, TraceState: validTS}
	h := EncodeRecord(rec)
	got, err := DecodeRecord("rshub.notify.c", h, nil, 1)
	if err != nil || got.TraceParent != validTP || got.TraceState != validTS {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	h[HeaderTraceParent] = []string{"00-zz-bad"}
	got, err = DecodeRecord("rshub.notify.c", h, nil, 1)
	if err != nil || got.TraceParent != "" || got.TraceState != "" {
		t.Fatalf("malformed traceparent: %+v, %v", got, err)
	}
	rec.TraceParent = "garbage\r\nInjected: 1"
	if h := EncodeRecord(rec); h.Get(HeaderTraceParent) != "" || h.Get(HeaderTraceState) != "" {
		t.Fatalf("a malformed traceparent was encoded: %v", h)
	}
}

// TestTraceCarrier_SetDropsMalformed: the carrier the propagator writes
// through keeps only well-formed values.
func TestTraceCarrier_SetDropsMalformed(t *testing.T) {
	var rec Record
	c := TraceCarrier{&rec}
	c.Set(HeaderTraceState, validTS)
	c.Set(HeaderTraceParent, validTP)
	c.Set("other", "x")
	if c.Get(HeaderTraceParent) != validTP || c.Get(HeaderTraceState) != validTS || c.Get("other") != "" {
		t.Fatalf("carrier: %+v", rec)
	}
	c.Set(HeaderTraceParent, "00-bad")
	c.Set(HeaderTraceState, "BAD")
	if rec.TraceParent != "" || rec.TraceState != "" {
		t.Fatalf("malformed values kept: %+v", rec)
	}
}

// FuzzCleanTrace: whatever CleanTrace keeps is bounded, printable ASCII and
// stable (cleaning it again keeps it), and a tracestate is never kept
// without a traceparent. Seeds are in testdata/fuzz/FuzzCleanTrace.
func FuzzCleanTrace(f *testing.F) {
	f.Add(validTP, validTS)
	f.Add("", "")
	f.Add(validTP, "a@b=c,,d=e ")
	f.Fuzz(func(t *testing.T, tp, ts string) {
		ktp, kts := CleanTrace(tp, ts)
		if ktp == "" && kts != "" {
			t.Fatalf("tracestate %q kept without a traceparent", kts)
		}
		if len(ktp) > 55 || len(kts) > MaxTraceState || !safeHeaderValue(ktp) || !safeHeaderValue(kts) {
			t.Fatalf("kept %q, %q", ktp, kts)
		}
		if a, b := CleanTrace(ktp, kts); a != ktp || b != kts {
			t.Fatalf("not stable: %q, %q then %q, %q", ktp, kts, a, b)
		}
	})
}
