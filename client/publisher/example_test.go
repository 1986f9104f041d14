package publisher_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/publisher"
)

// Example publishes two notifications to a stand-in hub: the second one's
// from is the first one's until.
func Example() {
	seq := 0
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, err := changefeed.Parse(r.Body, changefeed.Options{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		seq++
		fmt.Printf("hub got %s [%s, %s] with %d entries\n", doc.MD.Capability, doc.MD.From.Raw, doc.MD.Until.Raw, len(doc.Entries))
		fmt.Println("  Link:", strings.ReplaceAll(r.Header.Get("Link"), "http://"+r.Host, "HUB"))
		w.Header().Set("Rshub-Seq", fmt.Sprint(seq))
		_, _ = io.WriteString(w, "stored\n")
	}))
	defer hub.Close()

	now := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	p, err := publisher.New(context.Background(), publisher.Config{
		Hub:   hub.URL + "/",
		Topic: "http://example.com/dataset1/change/",
		Start: now.Add(-time.Minute),
		Now:   func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	for i, change := range []changefeed.Change{changefeed.Created, changefeed.Updated} {
		res, err := p.Publish(context.Background(), []publisher.Change{{
			Loc: "http://example.com/res1", Change: change, Hash: "md5:1e0d5cb8ef6ba40c99b14c0237be735e", Length: 8876,
		}})
		if err != nil {
			panic(err)
		}
		fmt.Printf("acknowledged seq %d, until %s\n", res.Seq, res.Window.Until.Format(time.RFC3339))
		now = now.Add(time.Duration(i+1) * time.Minute)
	}
	// Output:
	// hub got change-notification [2026-01-02T09:59:00Z, 2026-01-02T10:00:00Z] with 1 entries
	//   Link: <http://example.com/dataset1/change/>; rel="self", <HUB/>; rel="hub"
	// acknowledged seq 1, until 2026-01-02T10:00:00Z
	// hub got change-notification [2026-01-02T10:00:00Z, 2026-01-02T10:01:00Z] with 1 entries
	//   Link: <http://example.com/dataset1/change/>; rel="self", <HUB/>; rel="hub"
	// acknowledged seq 2, until 2026-01-02T10:01:00Z
}
