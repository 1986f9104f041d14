package server

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

// registerMercure serves the Mercure protocol at wire.PathMercure: GET
// (and OPTIONS) subscribe through the live sessions, POST publishes
// through the hub's intake; both take access tokens by the same rules
// (--mercure-audience, --mercure-issuer).
func (p *process) registerMercure(mux *http.ServeMux) error {
	rules, err := p.cfg.mercureRules(p.hubURL)
	if err != nil {
		return err
	}
	sub := p.live.MercureSubscribe(rules)
	pub := p.hub.MercurePublish(rules)
	if err := p.registerMercureSubscriptions(mux, rules); err != nil {
		return err
	}
	mux.Handle(wire.PathMercure, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			pub.ServeHTTP(w, r)
			return
		}
		sub.ServeHTTP(w, r)
	}))
	return nil
}

// mercureRules are the aud and iss Mercure access tokens must show.
func (s Config) mercureRules(hubURL string) (access.AccessRules, error) {
	aud := s.MercureAudience
	if aud == "" {
		u, err := url.Parse(hubURL)
		if err != nil {
			return access.AccessRules{}, fmt.Errorf("hub URL: %w", err)
		}
		aud = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: wire.PathMercure}).String()
	}
	return access.AccessRules{Audience: aud, Issuer: s.MercureIssuer}, nil
}
