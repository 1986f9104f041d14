package server

import (
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/rshub/rshub/dashboard"
	"github.com/rshub/rshub/hub"
)

// demoAdminToken returns the admin token to run with: the configured one,
// or, in demo mode without one, a random token so that the demo has its
// admin API and dashboard (its URL is logged with the token).
func demoAdminToken(s Config, logger *slog.Logger) (token string, generated bool) {
	if s.AdminToken != "" || !s.Demo {
		return s.AdminToken, false
	}
	logger.Warn("demo mode: no --admin-token given, generated one for the admin API and dashboard")
	return rand.Text(), true
}

// withDashboard returns the dashboard, when an admin token is set, and the
// hub's observer: obs alone, or obs and the dashboard's throughput Rate.
func withDashboard(s Config, hubURL string, obs hub.Observer, logger *slog.Logger) (*dashboard.Dashboard, hub.Observer) {
	if s.AdminToken == "" {
		return nil, obs
	}
	rate := dashboard.NewRate(dashboard.RateConfig{})
	d := dashboard.New(dashboard.Config{
		AdminToken: s.AdminToken,
		HubURL:     hubURL,
		WSToken:    s.WSToken,
		Rate:       rate,
		Logger:     logger.With("component", "dashboard"),
	})
	return d, observers{obs, rate}
}

// dashboardURL is where the dashboard is served for hubURL; with a token,
// the URL carries it in the fragment, which the page reads and browsers do
// not send.
func dashboardURL(hubURL, token string) string {
	u, err := url.Parse(hubURL)
	if err != nil {
		return ""
	}
	u.Path, u.RawQuery, u.Fragment = dashboard.Path, "", ""
	if token != "" {
		return u.String() + "#token=" + strings.ReplaceAll(url.QueryEscape(token), "+", "%20")
	}
	return u.String()
}

// logDashboard tells where the dashboard is; a generated demo token goes
// in the URL so that a newcomer can click it, a configured one never does.
func logDashboard(logger *slog.Logger, hubURL, token string, generated bool) {
	if generated {
		logger.Info("dashboard (demo token in the link)", "url", dashboardURL(hubURL, token))
		return
	}
	logger.Info("dashboard (asks for the admin token)", "url", dashboardURL(hubURL, ""))
}

// home is what the hub URL tells a person in a browser beyond the protocol.
func home(dashboard bool, hubURL string) string {
	u, err := url.Parse(hubURL)
	if err != nil {
		return ""
	}
	u.Path, u.RawQuery, u.Fragment = "", "", ""
	origin := u.String()
	out := "Source Description: " + origin + "/.well-known/resourcesync\nMetrics: " + origin + "/metrics"
	if dashboard {
		out += "\nDashboard: " + dashboardURL(hubURL, "") + " (needs the admin token)"
	}
	return out
}

// dashboardOffPage is the dashboard's page on a hub without an admin
// token: what to do, not a bare 404.
const dashboardOffPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rshub: the dashboard is off</title></head>
<body>
<h1>The dashboard is off</h1>
<p>The dashboard and the admin API need an admin token, and this hub was started without one.
Start it with <code>--admin-token &lt;token&gt;</code> (or the environment variable <code>RSHUB_ADMIN_TOKEN</code>),
then open <code>/dashboard/#token=&lt;token&gt;</code>.
With <code>--demo</code> and no token, the hub makes one and logs the dashboard's link with it.</p>
</body></html>
`

// adminOffMessage is the admin API's answer on a hub without an admin
// token.
const adminOffMessage = "the admin API is off: start the hub with --admin-token <token> (or RSHUB_ADMIN_TOKEN) and send Authorization: Bearer <token>\n"

// registerAdminOff answers the dashboard's and the admin API's paths on a
// hub without an admin token with a 404 that says how to turn them on.
func registerAdminOff(mux *http.ServeMux) {
	mux.HandleFunc(dashboard.Path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, dashboardOffPage)
	})
	mux.HandleFunc("/admin/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, adminOffMessage)
	})
}
