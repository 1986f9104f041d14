package bench

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// loopbackServers are HTTP servers on loopback ports sharing one handler:
// the callback hosts of a scenario, each one host for the hub's per-host
// limit and breaker.
type loopbackServers struct {
	servers []*http.Server
	bases   []string // http://127.0.0.1:port
}

// serveLoopback starts n servers of h; what names them in errors.
func serveLoopback(n int, h http.Handler, what string) (loopbackServers, error) {
	var s loopbackServers
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.close()
			return loopbackServers{}, fmt.Errorf("%s: %w", what, err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		goLabelled(what, func() { _ = srv.Serve(ln) })
		s.servers = append(s.servers, srv)
		s.bases = append(s.bases, "http://"+ln.Addr().String())
	}
	return s, nil
}

// on returns path on server i % n: callback i's URL.
func (s loopbackServers) on(i int, path string) string {
	return s.bases[i%len(s.bases)] + path
}

// close closes the servers and their connections at once. A graceful
// Shutdown would wait 5 s for every connection a client dialed but never
// sent a request on (net/http counts those as busy until then), and a
// scenario's senders have finished when it closes its servers.
func (s loopbackServers) close() {
	for _, srv := range s.servers {
		_ = srv.Close()
	}
}
