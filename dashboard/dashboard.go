package dashboard

import (
	"cmp"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

//go:embed assets
var assets embed.FS

// Path is where Register mounts the dashboard.
const Path = "/dashboard/"

// Config configures a Dashboard.
type Config struct {
	// AdminToken protects the dashboard's API, as it protects the hub's
	// admin API; the page itself is static and holds no data.
	AdminToken string
	// HubURL is the hub URL the page shows. When its path is not "/",
	// Register also redirects GET / to the dashboard.
	HubURL string
	// WSToken is the WebSocket endpoint's token, if it needs one; the page
	// gets it from the admin-protected config call.
	WSToken string
	// Rate gives the throughput chart its history; nil serves an empty one.
	Rate   *Rate
	Logger *slog.Logger
}

// Dashboard serves the browser dashboard.
type Dashboard struct {
	cfg    Config
	static http.Handler
}

// New returns a Dashboard for cfg.
func New(cfg Config) *Dashboard {
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.Rate == nil {
		cfg.Rate = NewRate(RateConfig{})
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic("dashboard: embedded assets: " + err.Error()) // cannot happen: the directory is embedded
	}
	return &Dashboard{cfg: cfg, static: http.StripPrefix(Path, http.FileServerFS(sub))}
}

// Register adds the dashboard's routes to mux: the page under /dashboard/,
// its API under /dashboard/api/, and GET / as a redirect to the page when
// the hub URL does not own it.
func (d *Dashboard) Register(mux *http.ServeMux) {
	mux.Handle("GET "+Path, d.page(d.static))
	mux.Handle("GET "+Path+"api/throughput", d.api(d.throughput))
	mux.Handle("GET "+Path+"api/config", d.api(d.config))
	if u, err := url.Parse(d.cfg.HubURL); err == nil && u.Path != "" && u.Path != "/" {
		mux.Handle("GET /{$}", http.RedirectHandler(Path, http.StatusFound))
	}
}

// page adds the headers of the static page: no framing (the page has
// buttons), scripts and connections to this origin only.
func (d *Dashboard) page(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' ws://"+r.Host+" wss://"+r.Host+"; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// api wraps a JSON handler with the admin token check.
func (d *Dashboard) api(fn func(*http.Request) any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if d.cfg.AdminToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(d.cfg.AdminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="rshub-admin"`)
			http.Error(w, "dashboard API needs Authorization: Bearer <admin token>", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if err := json.NewEncoder(w).Encode(fn(r)); err != nil {
			d.cfg.Logger.Debug("dashboard: write response", "path", r.URL.Path, "err", err)
		}
	})
}

// throughput returns the Rate's counts; ?seconds= narrows the window.
func (d *Dashboard) throughput(r *http.Request) any {
	n, _ := strconv.Atoi(r.URL.Query().Get("seconds"))
	return d.cfg.Rate.Snapshot(n)
}

// ClientConfig is what the page learns from GET /dashboard/api/config.
type ClientConfig struct {
	HubURL  string `json:"hubURL"`
	WSToken string `json:"wsToken,omitempty"` // present when /ws needs a token
}

func (d *Dashboard) config(*http.Request) any {
	return ClientConfig{HubURL: d.cfg.HubURL, WSToken: d.cfg.WSToken}
}
