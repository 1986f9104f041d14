package bench

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// entriesPerNotification is the number of <url> entries of each benchmark
// notification: a small, typical change-notification fragment.
const entriesPerNotification = 3

// markPrefix starts the mark that carries a notification's id and send time
// in its first entry's loc, so that any receiver (webhook body, WebSocket
// frame, NATS message) can compute publish→receipt from the bytes alone.
const markPrefix = "/rshub-bench/"

// notification returns a Change Notification fragment covering Source time
// [from, from+1s) whose first loc carries id and sent (Unix nanoseconds).
func notification(id int, sent time.Time, from time.Time) []byte {
	until := from.Add(time.Second)
	var b bytes.Buffer
	b.Grow(1024)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:ln rel="up" href="http://example.org/dataset1/capabilities.xml"/>
`)
	fmt.Fprintf(&b, `<rs:md capability="change-notification" from="%s" until="%s"/>`+"\n",
		from.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	for e := range entriesPerNotification {
		dt := from.Add(time.Duration(e+1) * time.Second / (entriesPerNotification + 1)).UTC().Format(time.RFC3339Nano)
		fmt.Fprintf(&b, `<url><loc>http://example.org%s%d/%d/%d</loc><rs:md change="updated" datetime="%s" hash="md5:1584abdf8ebdc9802ac0c6a7402c03b6" length="8876" type="text/html"/></url>`+"\n",
			markPrefix, id, sent.UnixNano(), e, dt)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// parseMark finds the first mark in b (a body or a frame) and returns its
// notification id and send time.
func parseMark(b []byte) (id int, sent time.Time, ok bool) {
	i := bytes.Index(b, []byte(markPrefix))
	if i < 0 {
		return 0, time.Time{}, false
	}
	rest := b[i+len(markPrefix):]
	idEnd := bytes.IndexByte(rest, '/')
	if idEnd <= 0 {
		return 0, time.Time{}, false
	}
	id, err := strconv.Atoi(string(rest[:idEnd]))
	if err != nil {
		return 0, time.Time{}, false
	}
	rest = rest[idEnd+1:]
	tEnd := bytes.IndexByte(rest, '/')
	if tEnd <= 0 {
		return 0, time.Time{}, false
	}
	ns, err := strconv.ParseInt(string(rest[:tEnd]), 10, 64)
	if err != nil {
		return 0, time.Time{}, false
	}
	return id, time.Unix(0, ns), true
}
