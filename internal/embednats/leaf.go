package embednats

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// LeafReconnect is how soon a leaf node dials its remote again after the
// link failed (after a failed dial, the NATS server adds up to as much).
const LeafReconnect = time.Second

// serverName names the server after its JetStream domain: two servers
// linked as leaf nodes must not share a name.
func serverName(domain string) string {
	if domain == "" {
		return "rshub-embedded"
	}
	return "rshub-" + domain
}

// leafOptions sets the JetStream domain, the leaf listener and the leaf
// remote of cfg on opts.
func leafOptions(opts *server.Options, cfg Config) error {
	opts.JetStreamDomain = cfg.Domain
	if cfg.LeafListen != "" {
		host, port, err := net.SplitHostPort(cfg.LeafListen)
		if err != nil {
			return fmt.Errorf("embednats: leaf listen address %q: %w", cfg.LeafListen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 {
			return fmt.Errorf("embednats: leaf listen port %q is not a port number", port)
		}
		if p > 0 {
			if err := checkPort(host, p); err != nil {
				return err
			}
		} else {
			p = server.RANDOM_PORT
		}
		opts.LeafNode.Host, opts.LeafNode.Port = host, p
		// the listen address is no edge's business: an edge dials the URL
		// it was given (a proxy's, a NAT's), never one the server announces
		opts.LeafNode.NoAdvertise = true
	}
	if cfg.LeafRemote != "" {
		// one remote, several URLs (an origin that is a NATS cluster): the
		// link dials the next one when the node it was on goes away
		var urls []*url.URL
		for _, s := range strings.Split(cfg.LeafRemote, ",") {
			u, err := url.Parse(strings.TrimSpace(s))
			if err != nil || u.Host == "" {
				return fmt.Errorf("embednats: leaf remote %q is not a URL (want nats-leaf://host:port)", s)
			}
			urls = append(urls, u)
		}
		opts.LeafNode.ReconnectInterval = LeafReconnect
		opts.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: urls}}
	}
	return nil
}

// LeafURL returns the nats-leaf:// URL edge servers link to, or "" when the
// server accepts no leaf node connections.
func (s *Server) LeafURL() string {
	if s.opts.LeafNode.Port <= 0 {
		return ""
	}
	return "nats-leaf://" + net.JoinHostPort(s.opts.LeafNode.Host, strconv.Itoa(s.opts.LeafNode.Port))
}

// LeafNodes returns how many leaf node connections the server has, in
// either direction.
func (s *Server) LeafNodes() int {
	return s.ns.NumLeafNodes()
}
