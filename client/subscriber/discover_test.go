package subscriber

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDiscover_TopicLinkHeadersComeFirst(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/topic", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Add("Link", `<`+srv.URL+`/topic>; rel="self"`)
		w.Header().Add("Link", `<http://hub/>; rel="hub", <`+srv.URL+`/cl.xml>; rel="resourcesync"`)
	})
	mux.HandleFunc("/cl.xml", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="capabilitylist"/><url><loc>` + srv.URL + `/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`))
	})
	ch, err := Discover(context.Background(), srv.Client(), srv.URL+"/topic")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Topic != srv.URL+"/topic" || ch.Hub != "http://hub/" || ch.CapabilityList != srv.URL+"/cl.xml" || ch.Capabilities["resourcelist"] != srv.URL+"/rl.xml" {
		t.Fatalf("got %+v", ch)
	}
}

func TestDiscover_NothingAnnouncedIsAnError(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/.well-known/resourcesync", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="description"/><url><loc>` + srv.URL + `/cl.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`))
	})
	mux.HandleFunc("/cl.xml", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="capabilitylist"/><url><loc>` + srv.URL + `/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`))
	})
	for _, u := range []string{srv.URL, srv.URL + "/cl.xml", srv.URL + "/missing"} {
		if ch, err := Discover(context.Background(), srv.Client(), u); err == nil {
			t.Errorf("Discover(%s) = %+v, want an error", u, ch)
		}
	}
}

// A URL below a site that answers 404 is not discovered as its site: the
// error says what the URL answered (the site's Source Description is only
// looked up for the site itself, or a page that is there but announces
// nothing).
func TestDiscover_MissingPageIsNotItsSite(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/.well-known/resourcesync", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="description"/><url><loc>` + srv.URL + `/cl.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`))
	})
	mux.HandleFunc("/cl.xml", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="capabilitylist"/><url><loc>` + srv.URL + `/topic</loc><rs:md capability="change-notification"/><rs:ln rel="hub" href="http://hub/"/></url></urlset>`))
	})
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>a home page</html>")) })
	ctx := context.Background()
	if _, err := DiscoverAll(ctx, srv.Client(), srv.URL+"/topics/nosuch"); err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), srv.URL+"/topic") {
		t.Fatalf("a missing page: %v, want its 404 and the site's topic as a hint", err)
	}
	for _, u := range []string{srv.URL, srv.URL + "/", srv.URL + "/page.html"} {
		if chs, err := DiscoverAll(ctx, srv.Client(), u); err != nil || len(chs) != 1 || chs[0].Topic != srv.URL+"/topic" {
			t.Errorf("DiscoverAll(%s) = %+v, %v, want the site's one channel", u, chs, err)
		}
	}
}
