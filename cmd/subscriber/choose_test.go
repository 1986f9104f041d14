package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// twoChannelHub serves a Source Description with two channels, as a hub
// holding two does.
func twoChannelHub(t *testing.T) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
		u := srv.URL
		switch r.URL.Path {
		case "/.well-known/resourcesync":
			fmt.Fprintf(w, `%s<rs:md capability="description"/><url><loc>%s/channels/a/capabilitylist.xml</loc></url><url><loc>%s/channels/b/capabilitylist.xml</loc></url></urlset>`, head, u, u)
		case "/channels/a/capabilitylist.xml", "/channels/b/capabilitylist.xml":
			name := strings.Split(r.URL.Path, "/")[2]
			fmt.Fprintf(w, `%s<rs:md capability="capabilitylist"/><url><loc>%s/topics/%s</loc><rs:md capability="change-notification"/><rs:ln rel="hub" href="%s/"/></url></urlset>`, head, u, name, u)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A hub or Source announcing several channels is not followed at random:
// the subscriber names them and asks for --topic, and takes the one given.
func TestChooseChannel_SeveralChannelsNeedATopic(t *testing.T) {
	srv := twoChannelHub(t)
	ctx := context.Background()
	_, err := chooseChannel(ctx, nil, srv.URL+"/", "")
	if err == nil || !strings.Contains(err.Error(), "--topic") || !strings.Contains(err.Error(), srv.URL+"/topics/a") || !strings.Contains(err.Error(), srv.URL+"/topics/b") {
		t.Fatalf("two channels, no --topic: %v, want an error naming both topics and --topic", err)
	}
	ch, err := chooseChannel(ctx, nil, srv.URL+"/", srv.URL+"/topics/b")
	if err != nil || ch.Topic != srv.URL+"/topics/b" || ch.Hub != srv.URL+"/" {
		t.Fatalf("--topic b: %+v, %v", ch, err)
	}
	if _, err := chooseChannel(ctx, nil, srv.URL+"/", srv.URL+"/topics/c"); err == nil || !strings.Contains(err.Error(), "no topic") {
		t.Fatalf("--topic of no channel: %v", err)
	}
	// the whole command says so too, before touching the mirror directory
	var out bytes.Buffer
	err = run(ctx, []string{"--source", srv.URL + "/", "--mirror", t.TempDir()}, noEnv, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "choose one with --topic") {
		t.Fatalf("run: %v", err)
	}
}

// With no arguments the subscriber names every mode, --source among them.
func TestSettings_NoArgumentsNamesEveryMode(t *testing.T) {
	var out bytes.Buffer
	_, err := parseSettings(nil, noEnv, &out)
	if err == nil {
		t.Fatal("no arguments accepted")
	}
	for _, want := range []string{"--mirror", "--source", "--hub", "--topic", "--dataset", "--atom", "--transport"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the answer to no arguments lacks %s:\n%v", want, err)
		}
	}
}

// A --source URL that is not there (a hub's /topics/nosuch) is an error
// saying so, with the site's topics as a hint: the site's channels are
// never presented as that URL's ("announces 2 channels").
func TestChooseChannel_MissingSourceURLSaysSo(t *testing.T) {
	srv := twoChannelHub(t)
	_, err := chooseChannel(context.Background(), nil, srv.URL+"/topics/nosuch", "")
	if err == nil || !strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "channels: choose") || strings.Contains(err.Error(), "announces 2") {
		t.Fatalf("--source %s/topics/nosuch: %v, want a 404 and no choice of channels", srv.URL, err)
	}
	if !strings.Contains(err.Error(), srv.URL+"/topics/a") || !strings.Contains(err.Error(), srv.URL+"/.well-known/resourcesync") {
		t.Errorf("--source %s/topics/nosuch: %v, want the site's topics as a hint", srv.URL, err)
	}
}
