package subscriber

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// maxDiscoveryBody bounds a document read during discovery.
const maxDiscoveryBody = 50 << 20

// Channel is a change-notification channel found by discovery.
type Channel struct {
	Topic string // topic URI (rel="self")
	Hub   string // hub URL (rel="hub")
	// CapabilityList is the Capability List that announced the channel
	// (or the rel="resourcesync" link of a topic URL), if known.
	CapabilityList string
	// Capabilities maps each capability of that Capability List to its
	// document URL (changelist, resourcelist, changelist-archive, ...).
	Capabilities map[changefeed.Capability]string
}

// Discover finds the change-notification channel behind rawURL, which may
// be a site (its Source Description is looked up), a Source Description, a
// Capability List, or a topic URL answering with Link headers rel="self"
// and rel="hub" (WebSub discovery: headers first). With several channels
// the first is returned; DiscoverAll returns them all.
func Discover(ctx context.Context, client *http.Client, rawURL string) (Channel, error) {
	all, err := DiscoverAll(ctx, client, rawURL)
	if err != nil {
		return Channel{}, err
	}
	return all[0], nil
}

// DiscoverAll is Discover returning every channel found, in document order.
func DiscoverAll(ctx context.Context, client *http.Client, rawURL string) ([]Channel, error) {
	client = cmp.Or(client, http.DefaultClient)
	links, doc, err := fetch(ctx, client, rawURL)
	if err == nil {
		topic, hub := wire.FirstLink(links, wire.RelSelf), wire.FirstLink(links, wire.RelHub)
		if topic != "" && hub != "" {
			ch := Channel{Topic: topic, Hub: hub, CapabilityList: wire.FirstLink(links, wire.RelResourceSync)}
			if ch.CapabilityList != "" {
				if _, d, err := fetch(ctx, client, ch.CapabilityList); err == nil {
					ch.Capabilities = capabilities(d)
				}
			}
			return []Channel{ch}, nil
		}
		if doc != nil {
			return fromDocument(ctx, client, rawURL, doc)
		}
	}
	u, perr := url.Parse(rawURL)
	if perr != nil || u.Path == wire.PathWellKnown {
		err = cmp.Or(err, errNotFound)
		return nil, fmt.Errorf("subscriber: discover %s: %w", rawURL, err)
	}
	wk := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: wire.PathWellKnown}).String()
	var se *statusError
	if errors.As(err, &se) && u.Path != "" && u.Path != "/" {
		// a page that is not there is not its site: the site's channels
		// are named as a hint, never taken in its place
		return nil, fmt.Errorf("subscriber: discover %s: %w%s", rawURL, err, siteHint(ctx, client, wk))
	}
	_, doc, werr := fetch(ctx, client, wk)
	if werr != nil {
		return nil, fmt.Errorf("subscriber: discover %s: %w", rawURL, errors.Join(err, werr))
	}
	return fromDocument(ctx, client, wk, doc)
}

// siteHint lists the topics the site's Source Description wk announces,
// for an error about a URL of that site; "" when it announces none.
func siteHint(ctx context.Context, client *http.Client, wk string) string {
	_, doc, err := fetch(ctx, client, wk)
	if err != nil || doc == nil {
		return ""
	}
	chs, err := fromDocument(ctx, client, wk, doc)
	if err != nil || len(chs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, " (the site's Source Description, %s, announces:", wk)
	for _, ch := range chs {
		b.WriteString("\n  " + ch.Topic)
	}
	b.WriteString(")")
	return b.String()
}

// statusError is a discovery GET answered with a status other than 2xx.
type statusError struct {
	url    string
	status string
}

func (e *statusError) Error() string { return "GET " + e.url + ": " + e.status }

// fromDocument reads channels from a Source Description or Capability List.
func fromDocument(ctx context.Context, client *http.Client, where string, doc *changefeed.Document) ([]Channel, error) {
	var out []Channel
	switch doc.MD.Capability {
	case changefeed.CapCapabilityList:
		out = channelsOf(where, doc)
	case changefeed.CapDescription:
		var errs []error
		for _, e := range doc.Entries {
			_, cl, err := fetch(ctx, client, e.Loc)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, channelsOf(e.Loc, cl)...)
		}
		if len(out) == 0 && len(errs) > 0 {
			return nil, fmt.Errorf("subscriber: discover %s: %w", where, errors.Join(errs...))
		}
	default:
		return nil, fmt.Errorf("subscriber: discover %s: a %q document announces no channel", where, doc.MD.Capability)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("subscriber: discover %s: %w", where, errNotFound)
	}
	return out, nil
}

// channelsOf returns the change-notification entries of Capability List cl.
func channelsOf(where string, cl *changefeed.Document) []Channel {
	if cl.MD.Capability != changefeed.CapCapabilityList {
		return nil
	}
	var out []Channel
	for _, e := range cl.Entries {
		if e.MD == nil || (e.MD.Capability != changefeed.CapChangeNotification && e.MD.Capability != changefeed.CapChangeListNotification) {
			continue
		}
		ch := Channel{Topic: e.Loc, CapabilityList: where, Capabilities: capabilities(cl)}
		for _, l := range e.Links {
			if l.Rel == "hub" {
				ch.Hub = l.Href
				break
			}
		}
		if ch.Hub != "" {
			out = append(out, ch)
		}
	}
	return out
}

// capabilities maps a Capability List's capabilities to their URLs.
func capabilities(cl *changefeed.Document) map[changefeed.Capability]string {
	if cl == nil || cl.MD.Capability != changefeed.CapCapabilityList {
		return nil
	}
	m := map[changefeed.Capability]string{}
	for _, e := range cl.Entries {
		if e.MD != nil && e.MD.Capability != "" {
			if _, dup := m[e.MD.Capability]; !dup {
				m[e.MD.Capability] = e.Loc
			}
		}
	}
	return m
}

// fetch GETs rawURL and returns its Link headers and, when the body is a
// ResourceSync document, the document.
func fetch(ctx context.Context, client *http.Client, rawURL string) ([]wire.Link, *changefeed.Document, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/xml, text/xml;q=0.9, */*;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	links := wire.ParseLinks(resp.Header.Values(wire.HeaderLink))
	if resp.StatusCode/100 != 2 {
		return links, nil, &statusError{url: rawURL, status: resp.Status}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBody))
	if err != nil {
		return links, nil, fmt.Errorf("GET %s: %w", rawURL, err)
	}
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Lenient})
	if err != nil {
		return links, nil, nil // not a ResourceSync document: only its links count
	}
	return links, doc, nil
}
