package jslog_test

import (
	"testing"
	"time"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/wire"
)

// FuzzHeaders_RoundTrip checks that any record fields survive the trip
// through NATS headers: every value EncodeHeaders emits is printable
// ASCII, nats.go's serialisation leaves it alone, and DecodeMsg gives back
// the original bytes.
func FuzzHeaders_RoundTrip(f *testing.F) {
	f.Add("https://example.org/t", "application/xml", "https://example.org/cl.xml", "key-1", "arxiv")
	f.Add("a\r\nNats-Msg-Id: x", "\x00", " padded ", "=?UTF-8?B?YQ==?=", "a.b")
	f.Add("https://例え.jp/", "\xff\xfe", "\t", "=?", "ch")
	f.Fuzz(func(t *testing.T, topic, contentType, resourceSync, key, channel string) {
		rec := wire.Record{Seq: 1, Topic: topic, Channel: channel, ContentType: contentType,
			ResourceSync: resourceSync, Key: key, Received: time.Unix(1, 2).UTC()}
		h := jslog.EncodeHeaders(rec)
		if err := safe(h); err != nil {
			t.Fatal(err)
		}
		got, err := jslog.DecodeMsg("rshub.notify.x", overTheWire(t, h), nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if channel == "" {
			rec.Channel = "x" // taken from the subject
		}
		if err := sameRecord(got, rec); err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{topic, contentType, key} {
			back, err := wire.DecodeHeaderValue(wire.EncodeHeaderValue(v))
			if err != nil || back != v {
				t.Fatalf("value %q: decoded %q, %v", v, back, err)
			}
		}
	})
}
