package bench

import (
	"context"
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

// close shuts the servers down.
func (s loopbackServers) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.servers {
		_ = srv.Shutdown(ctx)
	}
}
