package hub

import (
	"reflect"
	"testing"
)

func TestParseLinkHeaders_Forms(t *testing.T) {
	cases := []struct {
		name string
		in   []string
		want []WebLink
	}{
		{"one header two links", []string{`<http://t/>; rel="self", <http://h/>; rel="hub"`},
			[]WebLink{{"http://t/", []string{"self"}}, {"http://h/", []string{"hub"}}}},
		{"separate headers, spaces before ;", []string{`<http://t/> ; rel="self"`, `<http://h/> ; rel=hub`},
			[]WebLink{{"http://t/", []string{"self"}}, {"http://h/", []string{"hub"}}}},
		{"multiple rels, other params", []string{`<http://x/>; title="a, b; c"; rel="resourcesync alternate"`},
			[]WebLink{{"http://x/", []string{"resourcesync", "alternate"}}}},
		{"uppercase rel", []string{`<http://x/>; REL="Hub"`}, []WebLink{{"http://x/", []string{"hub"}}}},
		{"garbage skipped", []string{`junk, <http://x/>; rel=self`}, []WebLink{{"http://x/", []string{"self"}}}},
		{"unterminated", []string{`<http://x/; rel=self`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseLinkHeaders(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func FuzzParseLinkHeaders(f *testing.F) {
	f.Add(`<http://t/>; rel="self", <http://h/>; rel="hub"`)
	f.Add(`<a>; title="x\"y, z"; rel=hub,,<b>;rel`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range ParseLinkHeaders([]string{s}) {
			for _, r := range l.Rels {
				if r == "" {
					t.Fatalf("empty rel from %q", s)
				}
			}
		}
	})
}

func TestFormatLinks_RoundTrip(t *testing.T) {
	got := ParseLinkHeaders([]string{FormatLinks("http://t/?a=1", "http://h/", "http://c/cap.xml")})
	if LinkRel(got, "self")[0] != "http://t/?a=1" || LinkRel(got, "hub")[0] != "http://h/" || LinkRel(got, "resourcesync")[0] != "http://c/cap.xml" {
		t.Fatalf("%#v", got)
	}
}

func TestLeasePolicy_Grant(t *testing.T) {
	p := DefaultLeasePolicy()
	cases := []struct {
		ask  string
		want int64
		err  bool
	}{{"", 864000, false}, {"1", 300, false}, {"300", 300, false}, {"99999999999", 2678400, false}, {"0", 0, true}, {"-1", 0, true}, {"1.5", 0, true}, {"abc", 0, true}}
	for _, tc := range cases {
		got, err := p.Grant(tc.ask)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("Grant(%q) = %d, %v; want %d, err %v", tc.ask, got, err, tc.want, tc.err)
		}
	}
	if err := (LeasePolicy{Min: 10, Default: 5, Max: 20}).Validate(); err == nil {
		t.Error("default below min accepted")
	}
}

func TestAppendQuery_KeepsExistingParameters(t *testing.T) {
	cases := map[string]string{
		"http://c/cb":          "http://c/cb?hub.mode=x",
		"http://c/cb?a=1":      "http://c/cb?a=1&hub.mode=x",
		"http://c/cb?":         "http://c/cb?hub.mode=x",
		"http://c/cb?a=1#frag": "http://c/cb?a=1&hub.mode=x#frag",
	}
	for in, want := range cases {
		if got := AppendQuery(in, map[string][]string{"hub.mode": {"x"}}); got != want {
			t.Errorf("AppendQuery(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNameForTopic_SlugAndDistinct(t *testing.T) {
	a := NameForTopic("http://example.com/dataset1/change/")
	b := NameForTopic("http://example.com/dataset1/change")
	if !ValidChannelName(a) || !ValidChannelName(b) || a == b {
		t.Fatalf("names %q %q", a, b)
	}
	if n := NameForTopic("http://ÿ/"); !ValidChannelName(n) {
		t.Fatalf("name %q", n)
	}
}

func FuzzParseSubscription(f *testing.F) {
	f.Add("subscribe", "http://127.0.0.1/t", "http://127.0.0.1/cb?x=1", "secret", "3600")
	f.Add("unsubscribe", "http://t/", "https://c/", "", "")
	f.Add("subscribe", "ftp://t/", "http://u:p@c/", "", "-1")
	f.Fuzz(func(t *testing.T, mode, topic, callback, secret, lease string) {
		form := map[string][]string{"hub.mode": {mode}, "hub.topic": {topic}, "hub.callback": {callback}, "hub.secret": {secret}, "hub.lease_seconds": {lease}}
		p := DefaultLeasePolicy()
		r, err := ParseSubscription(form, p)
		if err != nil {
			return
		}
		if len(r.Secret) >= 200 || (r.Mode == "subscribe" && (r.Lease < p.Min || r.Lease > p.Max)) {
			t.Fatalf("accepted %+v", r)
		}
		if checkHTTPURL(r.Topic) != nil || checkHTTPURL(r.Callback) != nil {
			t.Fatalf("accepted bad URL %+v", r)
		}
	})
}
