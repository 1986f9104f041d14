package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// callbacks are loopback HTTP servers serving WebSub callbacks /cb/<i>:
// they answer verification GETs by echoing hub.challenge and record every
// POSTed notification in the current receipts. Subscriber i lives on
// server i % len(servers).
type callbacks struct {
	servers  []*http.Server
	bases    []string // http://127.0.0.1:port
	verified atomic.Int64
	current  atomic.Pointer[receipts]
	bodyErrs atomic.Int64 // POSTs without a readable mark
}

// startCallbacks listens on n loopback ports.
func startCallbacks(n int) (*callbacks, error) {
	c := &callbacks{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cb/{i}", c.verify)
	mux.HandleFunc("POST /cb/{i}", c.receive)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			c.close()
			return nil, fmt.Errorf("callback server: %w", err)
		}
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		go func() { _ = srv.Serve(ln) }()
		c.servers = append(c.servers, srv)
		c.bases = append(c.bases, "http://"+ln.Addr().String())
	}
	return c, nil
}

// url is subscriber i's callback URL.
func (c *callbacks) url(i int) string {
	return c.bases[i%len(c.bases)] + "/cb/" + strconv.Itoa(i)
}

func (c *callbacks) verify(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("hub.mode") == "subscribe" {
		c.verified.Add(1)
	}
	_, _ = io.WriteString(w, q.Get("hub.challenge"))
}

func (c *callbacks) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	now := time.Now()
	i, ierr := strconv.Atoi(r.PathValue("i"))
	id, sent, ok := parseMark(body)
	if err != nil || ierr != nil || !ok {
		c.bodyErrs.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if rc := c.current.Load(); rc != nil {
		rc.record(i, id, sent, now)
	}
	w.WriteHeader(http.StatusNoContent)
}

// measure makes rc the receipts that POSTs are recorded in.
func (c *callbacks) measure(rc *receipts) { c.current.Store(rc) }

func (c *callbacks) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range c.servers {
		_ = s.Shutdown(ctx)
	}
}
