package follow

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
)

const (
	rsHead = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
	idxHead = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
)

func mustParse(t *testing.T, s string) *changefeed.Document {
	t.Helper()
	doc, err := changefeed.Parse(strings.NewReader(s), changefeed.Options{Mode: changefeed.Lenient})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, s)
	}
	return doc
}

func TestClassify_WhatEachDocumentLeadsTo(t *testing.T) {
	const base = "http://src.example/rs/"
	tests := []struct {
		name  string
		u     string
		links []string
		doc   string
		want  Step
	}{
		{"html page: Link headers", base + "index.html",
			[]string{`<capabilitylist.xml>; rel="resourcesync"`, `</.well-known/resourcesync>; rel="describedby"`}, "",
			Step{Next: []string{base + "capabilitylist.xml", "http://src.example/.well-known/resourcesync"}}},
		{"source description: its first capability list, the others named", "http://src.example/.well-known/resourcesync", nil,
			rsHead + `<rs:md capability="description"/><url><loc>http://src.example/rs/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url><url><loc>http://src.example/other.xml</loc><rs:md capability="capabilitylist"/></url><url><loc>/third.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`,
			Step{Plan: Plan{Others: []string{"http://src.example/other.xml", "http://src.example/third.xml"}}, Next: []string{base + "capabilitylist.xml"}}},
		{"capability list: changelist to fetch, archive known", base + "capabilitylist.xml", nil,
			rsHead + `<rs:ln rel="up" href="/.well-known/resourcesync"/><rs:md capability="capabilitylist"/><url><loc>changelist-index.xml</loc><rs:md capability="changelist"/></url><url><loc>archive.xml</loc><rs:md capability="changelist-archive"/></url><url><loc>http://hub.example/t</loc><rs:ln rel="hub" href="http://hub.example/"/><rs:md capability="change-notification"/></url></urlset>`,
			Step{Plan: Plan{CapabilityList: base + "capabilitylist.xml", Archive: base + "archive.xml"}, Next: []string{base + "changelist-index.xml"}}},
		{"change list: itself, up to learn more", base + "changelist.xml", nil,
			rsHead + `<rs:ln rel="up" href="capabilitylist.xml"/><rs:ln rel="archives" href="archive.xml"/><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></urlset>`,
			Step{Plan: Plan{ChangeList: base + "changelist.xml", Archive: base + "archive.xml"}, Next: []string{base + "capabilitylist.xml"}}},
		{"change list index", base + "changelist-index.xml", nil,
			idxHead + `<rs:ln rel="up" href="capabilitylist.xml"/><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/><sitemap><loc>cl/1.xml</loc><rs:md from="2024-01-01T00:00:00Z"/></sitemap></sitemapindex>`,
			Step{Plan: Plan{Index: base + "changelist-index.xml"}, Next: []string{base + "capabilitylist.xml"}}},
		{"archive", base + "archive.xml", nil,
			rsHead + `<rs:ln rel="up" href="capabilitylist.xml"/><rs:md capability="changelist-archive"/></urlset>`,
			Step{Plan: Plan{Archive: base + "archive.xml"}, Next: []string{base + "capabilitylist.xml"}}},
		{"a resource list: itself", base + "resourcelist.xml", nil,
			rsHead + `<rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/></urlset>`, Step{Plan: Plan{ResourceList: base + "resourcelist.xml"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc *changefeed.Document
			if tt.doc != "" {
				doc = mustParse(t, tt.doc)
			}
			if got := Classify(tt.u, tt.links, doc); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Classify =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestSelectLists_ClosedBeforeTheAnchorSkippedOpenAlwaysReadOldestFirst(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2024, 1, 1, 0, m, 0, 0, time.UTC) }
	c1 := ListRef{URL: "c1", From: at(0), Until: at(10), Closed: true}
	refs := []ListRef{
		{URL: "c3", From: at(20)},
		c1,
		{URL: "c2", From: at(10), Until: at(20), Closed: true},
		{URL: "c2", From: at(10), Until: at(20), Closed: true},
	}
	tests := []struct {
		name   string
		refs   []ListRef
		anchor time.Time
		done   map[string]bool
		want   []string
	}{
		{"no anchor: everything, by from", refs, time.Time{}, nil, []string{"c1", "c2", "c3"}},
		{"anchor inside c2: from c2 on", refs, at(15), nil, []string{"c2", "c3"}},
		{"anchor at c2's until: c2 may hold more entries at that instant", refs, at(20), nil, []string{"c2", "c3"}},
		{"anchor after all: the open list still", refs, at(50), nil, []string{"c3"}},
		{"done lists are not read again", refs, time.Time{}, map[string]bool{c1.key(): true}, []string{"c2", "c3"}},
		{"a list served again with another window is another list", refs, time.Time{}, map[string]bool{ListRef{URL: "c1", From: at(0), Until: at(5)}.key(): true}, []string{"c1", "c2", "c3"}},
		{"an open list is read whatever its until", []ListRef{{URL: "o", From: at(0), Until: at(5)}}, at(50), map[string]bool{ListRef{URL: "o", From: at(0), Until: at(5)}.key(): true}, []string{"o"}},
		{"without windows: given order", []ListRef{{URL: "b"}, {URL: "a"}}, at(5), nil, []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range SelectLists(tt.refs, tt.anchor, tt.done) {
				got = append(got, r.URL)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SelectLists = %v, want %v", got, tt.want)
			}
		})
	}
}
