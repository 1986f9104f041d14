package server

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/live"
)

// registerMercureSubscriptions serves the Mercure subscription API
// (live.PathMercureSubscriptions and the paths below it) on this
// process's Mercure sessions, with the Mercure face's token rules.
func (p *process) registerMercureSubscriptions(mux *http.ServeMux, rules access.AccessRules) error {
	u, err := url.Parse(p.hubURL)
	if err != nil {
		return fmt.Errorf("hub URL: %w", err)
	}
	api := p.live.MercureSubscriptions(rules, u.Scheme+"://"+u.Host)
	mux.Handle(live.PathMercureSubscriptions, api)
	mux.Handle(live.PathMercureSubscriptions+"/", api)
	return nil
}
