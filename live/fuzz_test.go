package live

import (
	"net/url"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// FuzzParseWSQuery: any query string is refused with a reason of bounded
// length, or gives a request naming at most one cursor and at most
// wire.MaxSessionChannels valid channel names. Hostile seeds (thousands of names,
// huge values, repeated parameters, control and non-UTF-8 bytes) are in
// testdata/fuzz/FuzzParseWSQuery as well.
func FuzzParseWSQuery(f *testing.F) {
	for _, s := range []string{
		"channels=*", "channels=a,b&since=12", "channels=a&since_time=2024-01-01T00:00:00Z&raw=1", "since=1&since_time=x",
		"channels=&since=-1", "channels=a%2Cb&raw=yes",
		"channels=" + strings.Repeat("a,", 5000) + "a",
		"channels=" + strings.Repeat("x", 100000),
		"channels=a&channels=b&since=1&since=2",
		"channels=a&since=" + strings.Repeat("9", 5000),
		"channels=a&since_time=" + strings.Repeat("2024-01-01T00:00:00Z", 1000),
		"channels=%00%01%7F%FF,%E2%80%AE",
		"channels=*,a", "channels=a,*", "channels=%20a%20", "channels=a..b", "channels=" + strings.Repeat("n", 65),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		r, err := parseWSQuery(q)
		if err != nil {
			if len(err.Error()) > 1024 {
				t.Fatalf("reason of %d bytes for %d bytes of query", len(err.Error()), len(raw))
			}
			return
		}
		if q.Get("since") != "" && q.Get("since_time") != "" {
			t.Fatalf("accepted both cursors: %q -> %+v", raw, r)
		}
		if len(r.channels) > wire.MaxSessionChannels || (r.all && len(r.channels) > 0) || (!r.all && len(r.channels) == 0) {
			t.Fatalf("accepted %d channels (all %v) from %q", len(r.channels), r.all, raw)
		}
		for _, c := range r.channels {
			if !hub.ValidChannelName(c) {
				t.Fatalf("accepted channel name %q from %q", c, raw)
			}
		}
	})
}
