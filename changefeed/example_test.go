package changefeed_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
)

func ExampleParse() {
	payload := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>
  <rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-03T00:10:00Z"/>
  <url>
    <loc>http://example.com/res1</loc>
    <rs:md change="created" datetime="2013-01-03T00:07:22Z"/>
  </url>
</urlset>`
	doc, err := changefeed.Parse(strings.NewReader(payload), changefeed.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.MD.Capability, doc.MD.From.Raw, doc.MD.Until.Raw, doc.Link("up"))
	for _, e := range doc.Entries {
		fmt.Println(e.MD.Change, e.Loc, e.MD.DateTime.Time)
	}

	// A datetime outside [from, until] breaks rule datetime-range.
	bad := strings.Replace(payload, "00:07:22", "00:17:22", 1)
	_, err = changefeed.Parse(strings.NewReader(bad), changefeed.Options{})
	fmt.Println(err)
	// Output:
	// change-notification 2013-01-03T00:00:00Z 2013-01-03T00:10:00Z http://example.com/dataset1/capabilitylist.xml
	// created http://example.com/res1 2013-01-03 00:07:22 +0000 UTC
	// changefeed: rule datetime-range: entry 0 (line 5): datetime 2013-01-03T00:17:22Z after until 2013-01-03T00:10:00Z
}

func ExampleEncoder() {
	from := time.Date(2013, 1, 3, 0, 0, 0, 0, time.UTC)
	enc := changefeed.NewEncoder(os.Stdout)
	_ = enc.WriteHeader(&changefeed.Header{
		Kind:  changefeed.URLSet,
		MD:    changefeed.MD{Capability: changefeed.CapChangeNotification, From: changefeed.NewDateTime(from), Until: changefeed.NewDateTime(from.Add(10 * time.Minute)), Length: -1},
		Links: []changefeed.Link{{Rel: "up", Href: "http://example.com/dataset1/capabilitylist.xml", Length: -1, Pri: -1}},
	})
	_ = enc.WriteEntry(&changefeed.Entry{
		Loc: "http://example.com/res1?a=1&b=2",
		MD:  &changefeed.MD{Change: changefeed.Updated, DateTime: changefeed.NewDateTime(from.Add(time.Minute)), Length: 8876, Type: "text/html"},
	})
	if err := enc.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
	// <rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>
	// <rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-03T00:10:00Z"/>
	// <url><loc>http://example.com/res1?a=1&amp;b=2</loc><rs:md change="updated" datetime="2013-01-03T00:01:00Z" length="8876" type="text/html"/></url>
	// </urlset>
}

func ExampleCheckContinuity() {
	t := func(m int) time.Time { return time.Date(2013, 1, 3, 0, m, 0, 0, time.UTC) }
	var lastUntil time.Time
	for _, w := range []changefeed.Window{{From: t(0), Until: t(10)}, {From: t(10), Until: t(20)}, {From: t(25), Until: t(30)}, {From: t(28), Until: t(35)}, {From: t(0), Until: t(5)}} {
		c := changefeed.CheckContinuity(lastUntil, w.From, w.Until)
		if c.Verdict == changefeed.Gap {
			fmt.Printf("%s missing %s..%s\n", c.Verdict, c.Missing.From.Format("15:04"), c.Missing.Until.Format("15:04"))
		} else {
			fmt.Println(c.Verdict)
		}
		if w.Until.After(lastUntil) {
			lastUntil = w.Until
		}
	}
	// Output:
	// first
	// contiguous
	// gap missing 00:20..00:25
	// overlap
	// out-of-order
}
