package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// listRef is one Change List as an index or archive lists it.
type listRef struct {
	URL         string
	From, Until time.Time // Until is zero for an open list
}

func (l listRef) open() bool { return l.Until.IsZero() }

// getDoc fetches and decodes a document, calling entry for each entry; it
// returns the header.
func getDoc(ctx context.Context, client *http.Client, rawURL string, entry func(*changefeed.Entry) error) (*changefeed.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, &httpError{url: rawURL, status: resp.StatusCode, body: strings.TrimSpace(string(b))}
	}
	d := changefeed.NewDecoder(resp.Body, changefeed.Options{Mode: changefeed.Lenient})
	h, err := d.Header()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rawURL, err)
	}
	for {
		e, err := d.Next()
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rawURL, err)
		}
		if entry != nil {
			if err := entry(e); err != nil {
				return nil, err
			}
		}
	}
}

// httpError is a non-2xx answer.
type httpError struct {
	url    string
	status int
	body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("GET %s: %d %s", e.url, e.status, e.body) }

// HubChannel locates the hub's pull-mode documents for topic: it reads the
// hub's Source Description (wire.PathWellKnown at the hub URL's origin) and
// returns the Capability List whose change-notification entry is topic,
// and the channel name taken from its path (wire.ParsePath), or "" when
// the path is not a Capability List of the hub's layout.
func HubChannel(ctx context.Context, client *http.Client, hubURL, topic string) (capabilityList, name string, err error) {
	u, err := url.Parse(hubURL)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("mirror: hub URL %q: %v", hubURL, err)
	}
	desc := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: wire.PathWellKnown}).String()
	var lists []string
	if _, err := getDoc(ctx, client, desc, func(e *changefeed.Entry) error { lists = append(lists, e.Loc); return nil }); err != nil {
		return "", "", fmt.Errorf("mirror: hub Source Description: %w", err)
	}
	for _, cl := range lists {
		found := false
		_, err := getDoc(ctx, client, cl, func(e *changefeed.Entry) error {
			if e.MD != nil && e.MD.Capability == changefeed.CapChangeNotification && e.Loc == topic {
				found = true
			}
			return nil
		})
		if err != nil || !found {
			continue
		}
		return cl, channelName(cl), nil
	}
	return "", "", fmt.Errorf("mirror: the hub at %s lists no channel for topic %s", hubURL, topic)
}

// channelName extracts the channel name from the URL of a Capability List
// of the hub's layout (wire.CapabilityListPath).
func channelName(capabilityList string) string {
	u, err := url.Parse(capabilityList)
	if err != nil {
		return ""
	}
	if p, ok := wire.ParsePath(u.Path); ok && p.Doc == wire.DocCapabilityList {
		return p.Channel
	}
	return ""
}

// changeLists returns every Change List the hub serves for a channel, in
// chronological order: the archive's closed lists and the index's lists
// (the last closed ones and the open one).
func changeLists(ctx context.Context, client *http.Client, capabilityList string) ([]listRef, error) {
	var changelist, archive string
	if _, err := getDoc(ctx, client, capabilityList, func(e *changefeed.Entry) error {
		if e.MD == nil {
			return nil
		}
		switch e.MD.Capability {
		case changefeed.CapChangeList:
			changelist = e.Loc
		case changefeed.CapChangeListArchive:
			archive = e.Loc
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("mirror: hub Capability List: %w", err)
	}
	seen := map[string]bool{}
	var out []listRef
	add := func(e *changefeed.Entry) error {
		if seen[e.Loc] || e.MD == nil {
			return nil
		}
		seen[e.Loc] = true
		out = append(out, listRef{URL: e.Loc, From: e.MD.From.Time, Until: e.MD.Until.Time})
		return nil
	}
	if archive != "" {
		var pages []string
		h, err := getDoc(ctx, client, archive, func(e *changefeed.Entry) error {
			pages = append(pages, e.Loc)
			return add(e)
		})
		if err != nil {
			return nil, fmt.Errorf("mirror: Change List Archive: %w", err)
		}
		if h.Kind == changefeed.SitemapIndex { // an archive index: its entries are pages
			out, seen = nil, map[string]bool{}
			for _, p := range pages {
				if _, err := getDoc(ctx, client, p, add); err != nil {
					return nil, fmt.Errorf("mirror: Change List Archive page: %w", err)
				}
			}
		}
	}
	if changelist != "" {
		var entries []*changefeed.Entry
		h, err := getDoc(ctx, client, changelist, func(e *changefeed.Entry) error { entries = append(entries, e); return nil })
		if err != nil {
			return nil, fmt.Errorf("mirror: Change List Index: %w", err)
		}
		if h.Kind == changefeed.SitemapIndex {
			for _, e := range entries {
				_ = add(e)
			}
		} else if !seen[changelist] { // the open list itself
			out = append(out, listRef{URL: changelist, From: h.MD.From.Time, Until: h.MD.Until.Time})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].From.Before(out[j].From) })
	return out, nil
}

// errHistoryGone says the hub no longer holds a list that was listed.
var errHistoryGone = errors.New("mirror: the hub no longer holds part of the history")
