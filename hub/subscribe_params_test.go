package hub_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

func TestParseSubscription_RshubParameters(t *testing.T) {
	base := func() url.Values {
		return url.Values{"hub.mode": {"subscribe"}, "hub.topic": {"http://a.example/t"}, "hub.callback": {"http://b.example/cb"}}
	}
	f := base()
	f.Set("hub.secret", "s3cret")
	f.Set(wire.ParamSignatureScheme, wire.SchemeBoth)
	f[wire.ParamFilterPrefix] = []string{"http://a.example/x/", "http://a.example/y/"}
	f.Set(wire.ParamFilterChange, "created,deleted")
	r, err := hub.ParseSubscription(f, hub.DefaultLeasePolicy())
	if err != nil {
		t.Fatal(err)
	}
	if r.Scheme != wire.SchemeBoth || r.Filter == nil || len(r.Filter.Prefixes) != 2 || len(r.Filter.Changes) != 2 || r.Filter.Changes[1] != changefeed.Deleted {
		t.Fatalf("parsed %+v, filter %+v", r, r.Filter)
	}
	f = base()
	f.Set("hub.secret", "s3cret")
	f.Set(wire.ParamSignatureScheme, wire.SchemeWebSub)
	if r, err := hub.ParseSubscription(f, hub.DefaultLeasePolicy()); err != nil || r.Scheme != wire.SchemeWebSub {
		t.Fatalf("an explicit websub scheme: %q %v; it must win over a hub default", r.Scheme, err)
	}
	r, err = hub.ParseSubscription(base(), hub.DefaultLeasePolicy())
	if err != nil || r.Scheme != "" || r.Filter != nil {
		t.Fatalf("without rshub parameters: %+v %v, want the WebSub defaults", r, err)
	}
	for name, edit := range map[string]func(url.Values){
		"unknown scheme":   func(v url.Values) { v.Set(wire.ParamSignatureScheme, "md5") },
		"unknown change":   func(v url.Values) { v.Set(wire.ParamFilterChange, "moved") },
		"unknown coalesce": func(v url.Values) { v.Set(wire.ParamCoalesce, "yes") },
		"too many prefixes": func(v url.Values) {
			v[wire.ParamFilterPrefix] = strings.Split(strings.Repeat("http://p.example/,", changefeed.MaxFilterPrefixes+1), ",")
		},
	} {
		v := base()
		edit(v)
		if _, err := hub.ParseSubscription(v, hub.DefaultLeasePolicy()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseSubscription_RateBoundedAndDecimal(t *testing.T) {
	form := func(rates ...string) url.Values {
		return url.Values{"hub.mode": {"subscribe"}, "hub.topic": {"http://a.example/t"}, "hub.callback": {"http://b.example/cb"}, wire.ParamRate: rates}
	}
	for in, want := range map[string]float64{"5": 5, "0.5": 0.5, "0.01": hub.MinRate, "10000": hub.MaxRate, "007": 7} {
		r, err := hub.ParseSubscription(form(in), hub.DefaultLeasePolicy())
		if err != nil || r.Rate != want {
			t.Errorf("%s=%s: %v %v, want %v", wire.ParamRate, in, r.Rate, err, want)
		}
	}
	if r, err := hub.ParseSubscription(url.Values{"hub.mode": {"subscribe"}, "hub.topic": {"http://a.example/t"}, "hub.callback": {"http://b.example/cb"}}, hub.DefaultLeasePolicy()); err != nil || r.Rate != 0 {
		t.Fatalf("without %s: %v %v, want 0 (the hub's default)", wire.ParamRate, r.Rate, err)
	}
	for _, bad := range [][]string{{""}, {"0"}, {"0.001"}, {"10000.5"}, {"-1"}, {"+1"}, {"1e3"}, {"0x10"}, {"NaN"}, {"Inf"}, {"1.2.3"}, {"."}, {" 5"}, {"5/s"}, {strings.Repeat("1", 17)}, {"5", "6"}} {
		_, err := hub.ParseSubscription(form(bad...), hub.DefaultLeasePolicy())
		if err == nil || !strings.Contains(err.Error(), wire.ParamRate) {
			t.Errorf("%s=%q: %v, want a refusal naming %s", wire.ParamRate, bad, err, wire.ParamRate)
		}
	}
}
