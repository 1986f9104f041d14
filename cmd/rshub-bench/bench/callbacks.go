package bench

import (
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// callbacks are loopback HTTP servers serving WebSub callbacks /cb/<i>:
// they answer verification GETs by echoing hub.challenge and record every
// POSTed notification in the current receipts. Subscriber i lives on
// server i % len(servers). With channels > 0, subscriber i belongs to
// channel i % channels and is receiver i / channels of the receipts, whose
// notification base+ch is channel ch's.
type callbacks struct {
	loopbackServers
	channels int
	verified atomic.Int64
	current  atomic.Pointer[receipts]
	bodyErrs atomic.Int64 // POSTs without a readable mark
	wrong    atomic.Int64 // channels > 0: a measured notification at a subscriber of another channel
}

// startCallbacks listens on n loopback ports; channels is as in callbacks.
func startCallbacks(n, channels int) (*callbacks, error) {
	c := &callbacks{channels: channels}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cb/{i}", c.verify)
	mux.HandleFunc("POST /cb/{i}", c.receive)
	var err error
	if c.loopbackServers, err = serveLoopback(n, mux, "callback server"); err != nil {
		return nil, err
	}
	return c, nil
}

// url is subscriber i's callback URL.
func (c *callbacks) url(i int) string {
	return c.on(i, "/cb/"+strconv.Itoa(i))
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
		if c.channels > 0 {
			if k := id - rc.base; k >= 0 && k < rc.n && k != i%c.channels {
				c.wrong.Add(1)
				w.WriteHeader(http.StatusNoContent)
				return
			}
			i /= c.channels
		}
		rc.record(i, id, sent, now)
	}
	w.WriteHeader(http.StatusNoContent)
}

// measure makes rc the receipts that POSTs are recorded in.
func (c *callbacks) measure(rc *receipts) { c.current.Store(rc) }
