package kvstore_test

import (
	stdjson "encoding/json"
	"testing"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/rshub/rshub/hub"
)

// BenchmarkDecodeSubscription decodes one stored subscription as a start
// or a listing does, with encoding/json and with the segmentio decoder the
// store uses.
func BenchmarkDecodeSubscription(b *testing.B) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	val, err := stdjson.Marshal(hub.Subscription{
		ID: "abcdefabcdefabcdefabcdefabcdef12", Topic: "http://127.0.0.1:4000/topics/s00001", Channel: "s00001",
		Callback: "http://127.0.0.1:40000/cb/12345", Lease: 864000, Expires: now.Add(240 * time.Hour),
		State: hub.SubActive, Created: now, Verified: now, StartSeq: 1,
	})
	if err != nil {
		b.Fatal(err)
	}
	for name, decode := range map[string]func([]byte, any) error{"encoding-json": stdjson.Unmarshal, "segmentio": json.Unmarshal} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s hub.Subscription
				if err := decode(val, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
