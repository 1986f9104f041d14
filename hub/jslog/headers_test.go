package jslog_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// hostileValues break a NATS header when sent as they are: CR and LF end
// the line (and can inject a header or end the block), NUL and other
// control characters are not ASCII text, leading and trailing spaces are
// trimmed, non-ASCII is outside ADR-4, "=?" starts the encoded form.
var hostileValues = []string{
	"a\r\nNats-Msg-Id: injected",
	"\r\n\r\nbody",
	"nul\x00byte",
	"\x01\x1f\x7f",
	"tab\there",
	" padded ",
	"https://例え.jp/データ",
	"\xff\xfe invalid UTF-8",
	"=?UTF-8?B?looks-encoded?=",
	"=?",
	strings.Repeat("\r\n", 3000),
	strings.Repeat("ü", wire.MaxHeaderValue/2),
}

// overTheWire serialises h the way nats.go does on the connection (values
// trimmed, CR and LF replaced by spaces) and parses it back with nats.go's
// parser: what a consumer of the message receives.
func overTheWire(t testing.TB, h nats.Header) nats.Header {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("NATS/1.0\r\n")
	for k, vs := range h {
		for _, v := range vs {
			v = strings.NewReplacer("\r", " ", "\n", " ").Replace(strings.Trim(v, " \t\r\n"))
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	got, err := nats.DecodeHeadersMsg(b.Bytes())
	if err != nil {
		t.Fatalf("nats.go cannot parse the headers: %v", err)
	}
	return got
}

// safe reports whether every header value is printable ASCII without
// leading or trailing spaces.
func safe(h nats.Header) error {
	for k, vs := range h {
		for _, v := range vs {
			if v != strings.TrimSpace(v) {
				return errors.New(k + ": leading or trailing space")
			}
			for i := range len(v) {
				if v[i] < 0x20 || v[i] > 0x7e {
					return errors.New(k + ": byte outside printable ASCII")
				}
			}
		}
	}
	return nil
}

func TestEncodeHeaders_HostileValuesAreEncodedAndRoundTrip(t *testing.T) {
	for _, v := range hostileValues {
		rec := wire.Record{Seq: 3, Topic: v, Channel: "a", ContentType: v, ResourceSync: v, Key: v,
			Received: time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)}
		h := jslog.EncodeHeaders(rec)
		if err := safe(h); err != nil {
			t.Fatalf("value %q: %v", wire.Clip(v), err)
		}
		got, err := jslog.DecodeMsg("rshub.notify.a", overTheWire(t, h), nil, 3)
		if err != nil {
			t.Fatalf("value %q: %v", wire.Clip(v), err)
		}
		if err := sameRecord(got, rec); err != nil {
			t.Fatalf("value %q: %v", wire.Clip(v), err)
		}
	}
}

func TestEncodeHeaders_PlainValuesStayReadable(t *testing.T) {
	rec := wire.Record{Topic: "https://example.org/a b?x=%20&y=*", Channel: "a", ContentType: "application/xml; charset=utf-8", Key: "k-1"}
	h := jslog.EncodeHeaders(rec)
	for name, want := range map[string]string{wire.HeaderTopic: rec.Topic, wire.HeaderContentType: rec.ContentType, wire.HeaderMsgID: rec.Key} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q unencoded", name, got, want)
		}
	}
}

func TestDecodeMsg_RejectsMalformedEncodedValues(t *testing.T) {
	for _, v := range []string{"=?UTF-8?B?!!!?=", "=?UTF-8?B?YQ==", "=?ISO-8859-1?Q?x?=", "=?"} {
		h := nats.Header{wire.HeaderTopic: []string{v}}
		if _, err := jslog.DecodeMsg("rshub.notify.a", h, nil, 1); err == nil || !strings.Contains(err.Error(), wire.HeaderTopic) {
			t.Errorf("value %q: err = %v, want one naming %s", v, err, wire.HeaderTopic)
		}
	}
}

// TestAppend_HostileFieldsKeepTheConnection appends records whose fields
// would break the NATS protocol as raw header values, reads them back
// exactly, and checks the connection (which Open does not replace) is the
// same, still connected one.
func TestAppend_HostileFieldsKeepTheConnection(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	live := make(chan *nats.Msg, len(hostileValues))
	sub, err := nc.ChanSubscribe(l.Subject("hostile"), live)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, v := range hostileValues {
		rec := record("hostile", i)
		rec.Topic, rec.ContentType, rec.ResourceSync, rec.Key = v, v, v, v
		rec.Received = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
		rec.Seq = mustAppend(t, l, rec)
		got, err := l.Next(ctxT(t), "hostile", rec.Seq)
		if err != nil {
			t.Fatalf("value %q: %v", wire.Clip(v), err)
		}
		if err := sameRecord(got, rec); err != nil {
			t.Fatalf("value %q: Next: %v", wire.Clip(v), err)
		}
		select {
		case m := <-live:
			fromLive, err := jslog.DecodeMsg(m.Subject, m.Header, m.Data, rec.Seq)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameRecord(fromLive, rec); err != nil {
				t.Fatalf("value %q: live message: %v", wire.Clip(v), err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no live message")
		}
		if !nc.IsConnected() {
			t.Fatalf("value %q closed the connection: %v", wire.Clip(v), nc.LastError())
		}
	}
	tooLong := record("hostile", 99)
	tooLong.Topic = strings.Repeat("x", wire.MaxHeaderValue+1)
	if _, _, err := l.Append(ctxT(t), tooLong); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("Append of a too long topic: %v, want a refusal naming the limit", err)
	}
	for _, name := range []string{"a\x00b", "a\rb", "a\x7fb", strings.Repeat("c", jslog.MaxChannelLen+1)} {
		rec := record("x", 0)
		rec.Channel = name
		if _, _, err := l.Append(ctxT(t), rec); err == nil {
			t.Errorf("Append accepted channel %q", wire.Clip(name))
		}
	}
	mustAppend(t, l, record("hostile", 100))
	if !nc.IsConnected() {
		t.Fatalf("connection lost: %v", nc.LastError())
	}
}
