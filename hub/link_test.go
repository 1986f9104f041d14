package hub

import (
	"testing"

	"github.com/rshub/rshub/wire"
)

func TestFormatLinks_RoundTrip(t *testing.T) {
	got := wire.ParseLinks([]string{wire.NotificationLinks("http://t/?a=1", "http://h/", "http://c/cap.xml")})
	if wire.FirstLink(got, "self") != "http://t/?a=1" || wire.FirstLink(got, "hub") != "http://h/" || wire.FirstLink(got, "resourcesync") != "http://c/cap.xml" {
		t.Fatalf("%#v", got)
	}
}

func TestLeasePolicy_Grant(t *testing.T) {
	p := defaultLeasePolicy()
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
		if got := appendQuery(in, map[string][]string{"hub.mode": {"x"}}); got != want {
			t.Errorf("appendQuery(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNameForTopic_SlugAndDistinct(t *testing.T) {
	a := nameForTopic("http://example.com/dataset1/change/")
	b := nameForTopic("http://example.com/dataset1/change")
	if !ValidChannelName(a) || !ValidChannelName(b) || a == b {
		t.Fatalf("names %q %q", a, b)
	}
	if n := nameForTopic("http://ÿ/"); !ValidChannelName(n) {
		t.Fatalf("name %q", n)
	}
}

func FuzzParseSubscription(f *testing.F) {
	f.Add("subscribe", "http://127.0.0.1/t", "http://127.0.0.1/cb?x=1", "secret", "3600", "")
	f.Add("unsubscribe", "http://t/", "https://c/", "", "", "")
	f.Add("subscribe", "ftp://t/", "http://u:p@c/", "", "-1", "")
	for _, rate := range []string{"5", "0.01", "10000", "0.5", "0", "10001", "-1", "1e3", "0x10", "NaN", "Inf", "1.2.3", ".", "5 ", "00000000000000005"} {
		f.Add("subscribe", "http://127.0.0.1/t", "http://127.0.0.1/cb", "", "", rate)
	}
	f.Fuzz(func(t *testing.T, mode, topic, callback, secret, lease, rate string) {
		form := map[string][]string{"hub.mode": {mode}, "hub.topic": {topic}, "hub.callback": {callback}, "hub.secret": {secret}, "hub.lease_seconds": {lease}}
		if rate != "" {
			form[wire.ParamRate] = []string{rate}
		}
		p := defaultLeasePolicy()
		r, err := parseSubscription(form, p)
		if err != nil {
			return
		}
		if len(r.Secret) >= 200 || (r.Mode == "subscribe" && (r.Lease < p.Min || r.Lease > p.Max)) {
			t.Fatalf("accepted %+v", r)
		}
		if r.Rate != 0 && !(r.Rate >= MinRate && r.Rate <= MaxRate) || rate != "" && r.Rate == 0 {
			t.Fatalf("accepted rate %q as %v", rate, r.Rate)
		}
		if checkHTTPURL(r.Topic) != nil || checkHTTPURL(r.Callback) != nil {
			t.Fatalf("accepted bad URL %+v", r)
		}
	})
}
