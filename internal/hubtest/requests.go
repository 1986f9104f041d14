package hubtest

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/wire"
)

// Do sends req with the headers given as name, value pairs and returns
// the status and body of the answer.
func Do(tb testing.TB, req *http.Request, hdr ...string) (int, string) {
	tb.Helper()
	status, body, _ := DoHeader(tb, req, hdr...)
	return status, body
}

// DoHeader is Do that also returns the answer's header.
func DoHeader(tb testing.TB, req *http.Request, hdr ...string) (int, string, http.Header) {
	tb.Helper()
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// SubscribeForm is a subscription request, with extra fields given as
// name, value pairs.
func SubscribeForm(topic, cb string, extra ...string) url.Values {
	v := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Add(extra[i], extra[i+1])
	}
	return v
}

// Notif builds a change-notification payload with one entry per datetime.
func Notif(capability, from, until string, datetimes ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>
`)
	fmt.Fprintf(&b, `<rs:md capability=%q from=%q until=%q/>`+"\n", capability, from, until)
	for i, dt := range datetimes {
		fmt.Fprintf(&b, `<url><loc>http://example.com/res%d</loc><rs:md change="updated" datetime=%q/></url>`+"\n", i, dt)
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

// Links are a fat ping's Link headers.
func Links(topic, hubURL string) []string {
	return []string{"<" + topic + `>; rel="self"`, "<" + hubURL + `>; rel="hub"`}
}

// MustTime parses an RFC 3339 time and panics if it cannot.
func MustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Record is the i-th change notification of channel as the log holds it,
// with one entry: its until is minute i of 2024 (UTC), its from the minute
// before, and its idempotency key unique.
func Record(channel string, i int) wire.Record {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	from, until := base.Add(time.Duration(i-1)*time.Minute), base.Add(time.Duration(i)*time.Minute)
	body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="change-notification" from="%s" until="%s"/>
  <url><loc>http://example.com/%s/%d</loc><lastmod>%s</lastmod><rs:md change="updated" datetime="%s" length="12" type="text/plain"/></url>
</urlset>`, from.Format(time.RFC3339), until.Format(time.RFC3339), channel, i,
		until.Format(time.RFC3339), until.Format(time.RFC3339))
	return wire.Record{
		Topic: "http://example.com/" + channel + "/changelist.xml", Channel: channel,
		From: from, Until: until, ContentType: "application/xml",
		Key: fmt.Sprintf("%s-%d-%d", channel, i, time.Now().UnixNano()), Body: []byte(body), Entries: 1,
	}
}
