package dataset

import (
	"bufio"
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

// RelDescribedBy is the link relation naming a dataset's description.
const RelDescribedBy = "describedby"

// maxDocument bounds a ResourceSync document or description read whole.
const maxDocument = 64 << 20

// Dataset is one dataset of a Source: one Capability List, as Timbuctoo
// counts them, with what it offers.
type Dataset struct {
	CapabilityList string `json:"capabilityList"`
	// Description is the describedby document of the Capability List
	// (its root rs:ln, else the Source Description entry's rs:ln, else
	// the Capability List's Link header); "" if none.
	Description string `json:"description,omitempty"`
	// Title is the description's dcterms:title (or dc:title); "" when
	// there is no description or it has no title.
	Title string `json:"title,omitempty"`
	// DescriptionError says why the description could not be read.
	DescriptionError string `json:"descriptionError,omitempty"`
	ChangeList       string `json:"changeList,omitempty"`
	ResourceList     string `json:"resourceList,omitempty"`
	// Topic and Hub are the change-notification channel, when announced.
	Topic string `json:"topic,omitempty"`
	Hub   string `json:"hub,omitempty"`
}

// Name returns a short name for the dataset: the last path segment of its
// Capability List's directory (".../dataset1/capabilitylist.xml" gives
// "dataset1"), else the Capability List URL.
func (d Dataset) Name() string {
	u, err := url.Parse(d.CapabilityList)
	if err != nil {
		return d.CapabilityList
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) >= 2 {
		return parts[len(parts)-2]
	}
	return d.CapabilityList
}

// ErrNoDatasets is returned by Discover when nothing leads to a
// Capability List.
var ErrNoDatasets = errors.New("dataset: no ResourceSync Capability List found")

// Discover finds the datasets behind rawURL, as a ResourceSync
// destination does: the URL's own Link headers (rel="resourcesync", then
// rel="describedby"'s document itself when it is a Capability List), the
// document at the URL when it is a Source Description, Capability List or
// a list pointing up to one, then /.well-known/resourcesync, then the
// Sitemap: lines of /robots.txt. Each dataset's description is fetched and
// its title read (a failure is recorded in DescriptionError, not returned).
func Discover(ctx context.Context, client *http.Client, rawURL string) ([]Dataset, error) {
	client = cmp.Or(client, http.DefaultClient)
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("dataset: discover %q: not an absolute URL", rawURL)
	}
	d := &discoverer{ctx: ctx, client: client, seen: map[string]bool{}, describedBy: map[string]string{}}
	var errs []error
	try := func(loc string) bool {
		if err := d.follow(loc, 0); err != nil {
			errs = append(errs, err)
		}
		return len(d.lists) > 0
	}
	origin := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	if !try(rawURL) && !try(origin+wire.PathWellKnown) {
		for _, sm := range d.robots(origin + "/robots.txt") {
			try(sm)
		}
	}
	if len(d.lists) == 0 {
		return nil, fmt.Errorf("dataset: discover %s: %w", rawURL, errors.Join(append([]error{ErrNoDatasets}, errs...)...))
	}
	out := make([]Dataset, 0, len(d.lists))
	for _, cl := range d.lists {
		ds := d.datasets[cl]
		ds.Description = cmp.Or(ds.Description, d.describedBy[cl])
		if ds.Description != "" {
			title, err := FetchTitle(ctx, client, ds.Description)
			ds.Title = title
			if err != nil {
				ds.DescriptionError = err.Error()
			}
		}
		out = append(out, ds)
	}
	return out, nil
}

// discoverer walks ResourceSync documents towards Capability Lists.
type discoverer struct {
	ctx         context.Context
	client      *http.Client
	seen        map[string]bool
	lists       []string // Capability Lists, in discovery order
	datasets    map[string]Dataset
	describedBy map[string]string // Capability List -> description named by a Source Description entry
}

// follow reads loc and every document it leads to, up to a small depth.
func (d *discoverer) follow(loc string, depth int) error {
	if d.seen[loc] || depth > 3 {
		return nil
	}
	d.seen[loc] = true
	links, doc, err := getDocument(d.ctx, d.client, loc)
	if err != nil {
		return err
	}
	if doc == nil {
		for _, rel := range []string{wire.RelResourceSync, RelDescribedBy} {
			for _, l := range links {
				if l.Has(rel) {
					_ = d.follow(l.Href, depth+1)
				}
			}
		}
		return nil
	}
	switch doc.MD.Capability {
	case changefeed.CapCapabilityList:
		d.addList(loc, doc)
		if href := wire.FirstLink(links, RelDescribedBy); href != "" && d.describedBy[loc] == "" {
			d.describedBy[loc] = href // the Capability List's own Link header
		}
	case changefeed.CapDescription:
		for _, e := range doc.Entries {
			for _, l := range e.Links {
				if l.Rel == RelDescribedBy {
					d.describedBy[e.Loc] = l.Href
				}
			}
			if err := d.follow(e.Loc, depth+1); err != nil {
				return err
			}
		}
	default: // a list: go up to its Capability List
		if up := doc.Link("up"); up != "" {
			return d.follow(up, depth+1)
		}
	}
	return nil
}

// addList records a Capability List as a dataset.
func (d *discoverer) addList(loc string, doc *changefeed.Document) {
	if d.datasets == nil {
		d.datasets = map[string]Dataset{}
	}
	if _, ok := d.datasets[loc]; ok {
		return
	}
	ds := Dataset{CapabilityList: loc, Description: doc.Link(RelDescribedBy)}
	for _, e := range doc.Entries {
		if e.MD == nil {
			continue
		}
		switch e.MD.Capability {
		case changefeed.CapChangeList:
			ds.ChangeList = e.Loc
		case changefeed.CapResourceList:
			ds.ResourceList = e.Loc
		case changefeed.CapChangeNotification, changefeed.CapChangeListNotification:
			ds.Topic = e.Loc
			for _, l := range e.Links {
				if l.Rel == wire.RelHub {
					ds.Hub = l.Href
				}
			}
		}
	}
	d.datasets[loc] = ds
	d.lists = append(d.lists, loc)
}

// robots returns the Sitemap: URLs of a robots.txt.
func (d *discoverer) robots(loc string) []string {
	body, _, err := getBody(d.ctx, d.client, loc, "text/plain")
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "sitemap") {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// getDocument GETs loc and returns its Link headers and, when the body is
// a ResourceSync document, the document.
func getDocument(ctx context.Context, client *http.Client, loc string) ([]wire.Link, *changefeed.Document, error) {
	links, doc, err := getList(ctx, client, loc)
	var pe *parseError
	if errors.As(err, &pe) {
		return links, nil, nil
	}
	return links, doc, err
}

// parseError says a body is not a ResourceSync document.
type parseError struct{ err error }

func (e *parseError) Error() string { return e.err.Error() }
func (e *parseError) Unwrap() error { return e.err }

// getList is getDocument failing with a *parseError when the body is not
// a ResourceSync document.
func getList(ctx context.Context, client *http.Client, loc string) ([]wire.Link, *changefeed.Document, error) {
	body, h, err := getBody(ctx, client, loc, "application/xml, text/xml;q=0.9, */*;q=0.1")
	if err != nil {
		return nil, nil, err
	}
	links := wire.ParseLinks(h.Values(wire.HeaderLink))
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Lenient})
	if err != nil {
		return links, nil, &parseError{fmt.Errorf("dataset: %s: %w", loc, err)}
	}
	return links, doc, nil
}

// getBody GETs loc and returns its body (at most maxDocument bytes).
func getBody(ctx context.Context, client *http.Client, loc, accept string) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: GET %s: %w", loc, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, resp.Header, fmt.Errorf("dataset: GET %s: %s", loc, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return nil, resp.Header, fmt.Errorf("dataset: GET %s: %w", loc, err)
	}
	return body, resp.Header, nil
}
