package embednats

import (
	"strings"
	"testing"
	"time"
)

// A server with a leaf listener names its URL; one given it as its leaf
// remote links to it; both see the link. Servers without leaf settings
// have no URL.
func TestLeaf_LinksToTheListenerItWasGiven(t *testing.T) {
	origin, err := Start(Config{DataDir: t.TempDir(), Domain: "origin", LeafListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer origin.Shutdown()
	u := origin.LeafURL()
	if !strings.HasPrefix(u, "nats-leaf://127.0.0.1:") || strings.HasSuffix(u, ":0") {
		t.Fatalf("LeafURL = %q", u)
	}
	edge, err := Start(Config{DataDir: t.TempDir(), Domain: "edge", LeafRemote: u})
	if err != nil {
		t.Fatal(err)
	}
	defer edge.Shutdown()
	for deadline := time.Now().Add(10 * time.Second); origin.LeafNodes() != 1 || edge.LeafNodes() != 1; {
		if time.Now().After(deadline) {
			t.Fatal("no leaf link within 10s")
		}
		time.Sleep(10 * time.Millisecond) // poll interval with a deadline (testenv imports this package)
	}
	if edge.LeafURL() != "" {
		t.Fatalf("a server without a leaf listener has LeafURL %q", edge.LeafURL())
	}
}

func TestLeaf_RefusesBadAddresses(t *testing.T) {
	for _, cfg := range []Config{
		{LeafListen: "7422"},
		{LeafListen: "127.0.0.1:http"},
		{LeafRemote: "origin:7422"},
		{LeafRemote: "nats-leaf://a:7422,origin:7422"},
	} {
		cfg.DataDir = t.TempDir()
		if s, err := Start(cfg); err == nil {
			s.Shutdown()
			t.Errorf("Start(%+v) succeeded", cfg)
		}
	}
}
