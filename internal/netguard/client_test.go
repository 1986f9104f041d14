package netguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestNewClient_RefusesLoopbackByDefault(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the server: %s %s", r.Method, r.URL)
	}))
	defer srv.Close()

	c := NewClient(Policy{}, Timeouts{})
	resp, err := c.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET to a loopback server succeeded with the default policy")
	}
	var re *RefusedError
	if !errors.As(err, &re) || re.Class != "loopback" {
		t.Fatalf("error = %v, want a loopback *RefusedError", err)
	}
}

func TestNewClient_ReachesLoopbackWhenAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	p, err := ParsePolicy([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := NewClient(p, Timeouts{}).Get(srv.URL)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status = %d", resp.StatusCode)
	}
}

func TestNewClient_DoesNotFollowRedirects(t *testing.T) {
	followed := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		followed <- struct{}{}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	p, _ := ParsePolicy([]string{"127.0.0.0/8"})
	resp, err := NewClient(p, Timeouts{}).Post(srv.URL+"/start", "text/plain", nil)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status = %d, want 302 returned as is", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "/elsewhere" {
		t.Errorf("Location = %q", loc)
	}
	select {
	case <-followed:
		t.Fatal("redirect was followed")
	default:
	}
}

func TestNewClient_AppliesTimeoutDefaults(t *testing.T) {
	c := NewClient(Policy{}, Timeouts{})
	tr := c.Transport.(*http.Transport)
	d := DefaultTimeouts()
	if c.Timeout != d.Request || tr.ResponseHeaderTimeout != d.ResponseHeader ||
		tr.TLSHandshakeTimeout != d.TLSHandshake || tr.MaxIdleConnsPerHost != d.MaxIdleConnsPerHost {
		t.Fatalf("defaults not applied: %+v %+v", c, tr)
	}
	if tr.Proxy != nil {
		t.Fatal("client must not use a proxy")
	}
}

// The idle connections kept in all follow Timeouts.MaxIdleConns, so that
// fan-out to more hosts than the default pool covers reuses connections.
func TestNewClient_IdlePoolSize(t *testing.T) {
	for _, tt := range []struct {
		in   Timeouts
		want int
	}{
		{Timeouts{}, 256},
		{Timeouts{MaxIdleConnsPerHost: 128}, 512},
		{Timeouts{MaxIdleConns: 2048}, 2048},
	} {
		tr := NewClient(Policy{}, tt.in).Transport.(*http.Transport)
		if tr.MaxIdleConns != tt.want {
			t.Errorf("NewClient(%+v): MaxIdleConns %d, want %d", tt.in, tr.MaxIdleConns, tt.want)
		}
	}
}
