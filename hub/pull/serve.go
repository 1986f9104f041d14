package pull

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Cache-Control values.
const (
	immutable  = "public, max-age=31536000, immutable"
	shortLived = "public, max-age=5" // ShortMaxAge
)

// doc is one response: validators, caching and how to produce the body.
type doc struct {
	etag     string    // opaque tag, without quotes; the gzip variant gets "-gz"
	modified time.Time // Last-Modified; zero: none
	cache    string    // Cache-Control
	link     string    // the Link header (see linkHeader); "" for none
	ctype    string    // Content-Type; "" means application/xml
	write    func(io.Writer) error
	// stored, when set, returns the document rendered and compressed
	// (closed lists); it is used instead of write.
	stored func() (*rendered, error)
	gone   func() // called when write or stored reports errGone
}

// tag returns an entity tag for parts, which must identify a
// representation's content completely.
func tag(parts ...any) string {
	h := fnv.New64a()
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			io.WriteString(h, v)
		case uint64:
			io.WriteString(h, strconv.FormatUint(v, 10))
		case int:
			io.WriteString(h, strconv.Itoa(v))
		case bool:
			io.WriteString(h, strconv.FormatBool(v))
		case time.Time:
			io.WriteString(h, strconv.FormatInt(v.UnixNano(), 10))
		}
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// serve answers r with d: conditional requests (If-None-Match, else
// If-Modified-Since) get 304, HEAD gets the headers only, and the body is
// gzip-compressed when the client accepts it.
func (p *Pull) serve(w http.ResponseWriter, r *http.Request, d doc) {
	gz := acceptsGzip(r)
	etag := `"` + d.etag
	if gz {
		etag += "-gz"
	}
	etag += `"`
	h := w.Header()
	d.ctype = cmp.Or(d.ctype, "application/xml")
	h.Set("Content-Type", d.ctype)
	h.Set("ETag", etag)
	if h.Get("Cache-Control") == "" { // a private channel's documents set theirs (private.go)
		h.Set("Cache-Control", d.cache)
	}
	h.Set("Vary", "Accept-Encoding")
	if d.link != "" {
		h.Set("Link", d.link)
	}
	if !d.modified.IsZero() {
		h.Set("Last-Modified", d.modified.UTC().Format(http.TimeFormat))
	}
	if notModified(r, etag, d.modified) {
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	if d.stored != nil {
		p.serveStored(w, r, d, gz)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	lw := &lazyWriter{w: w}
	var zw *gzip.Writer
	if gz {
		zw = p.gz.Get().(*gzip.Writer)
		defer p.gz.Put(zw)
		zw.Reset(w)
		lw.out = zw
	}
	err := d.write(lw)
	if err == nil && zw != nil && lw.started {
		err = zw.Close()
	}
	if err != nil {
		p.failed(w, r, d, err, lw.started)
	}
}

// serveStored answers from a rendered, compressed document.
func (p *Pull) serveStored(w http.ResponseWriter, r *http.Request, d doc, gz bool) {
	rd, err := d.stored()
	if err != nil {
		p.failed(w, r, d, err, false)
		return
	}
	if gz {
		w.Header().Set("Content-Length", strconv.Itoa(len(rd.gz)))
	} else {
		w.Header().Set("Content-Length", strconv.FormatInt(rd.size, 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if gz {
		_, _ = w.Write(rd.gz)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(rd.gz))
	if err == nil {
		_, err = io.Copy(w, zr)
	}
	if err != nil && r.Context().Err() == nil {
		p.logger.Error("serving a stored Change List", "path", wire.Clip(r.URL.Path), "err", err)
		panic(http.ErrAbortHandler)
	}
}

// failed reports an error from producing a body: 404 when the document's
// records are gone, 500 otherwise; a response already under way is aborted
// so the client never takes a truncated document for a whole one.
func (p *Pull) failed(w http.ResponseWriter, r *http.Request, d doc, err error, started bool) {
	if errors.Is(err, errGone) && d.gone != nil {
		d.gone()
	}
	if started {
		if r.Context().Err() == nil {
			p.logger.Error("document aborted", "path", wire.Clip(r.URL.Path), "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	h := w.Header()
	for _, k := range []string{"ETag", "Last-Modified", "Content-Encoding", "Content-Length", "Link"} {
		h.Del(k)
	}
	h.Set("Cache-Control", "no-store")
	switch {
	case errors.Is(err, errGone):
		p.refuse(w, hub.ReasonNoDocument, "this Change List is no longer held by the hub's log")
	case errors.Is(err, errLog) || r.Context().Err() != nil:
		// an outage of the log is logged by Sync, once; not per request
		p.logger.Debug("document failed", "path", wire.Clip(r.URL.Path), "err", err)
		p.unavailable(w, "the log cannot be read right now")
	default:
		p.logger.Error("document failed", "path", wire.Clip(r.URL.Path), "err", err)
		httpError(w, http.StatusInternalServerError, "internal error")
	}
}

// unavailable answers 503 with a short Retry-After: the log or the store
// fails, and the hub retries by itself.
func (p *Pull) unavailable(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", "1")
	p.refuse(w, hub.ReasonUnavailable, "%s", msg)
}

// refuse answers a refusal through the hub's refusal table (Config.Refusals),
// without the Content-Encoding a document had set.
func (p *Pull) refuse(w http.ResponseWriter, r hub.Reason, format string, args ...any) {
	w.Header().Del("Content-Encoding")
	p.cfg.Refusals.Refuse(w, r, format, args...)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Del("Content-Encoding")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

// lazyWriter sends the status line with the first byte, so an error found
// before any output can still change the status.
type lazyWriter struct {
	w       http.ResponseWriter
	out     io.Writer // nil: w
	started bool
}

func (l *lazyWriter) Write(b []byte) (int, error) {
	if !l.started {
		l.started = true
		l.w.WriteHeader(http.StatusOK)
	}
	if l.out != nil {
		return l.out.Write(b)
	}
	return l.w.Write(b)
}

// notModified evaluates If-None-Match, or when absent If-Modified-Since
// (RFC 9110 §13.2.2), for a GET or HEAD.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Values("If-None-Match"); len(inm) > 0 {
		for _, v := range inm {
			for _, t := range strings.Split(v, ",") {
				t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
				if t == "*" || t == etag {
					return true
				}
			}
		}
		return false
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" || modified.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims)
	return err == nil && !modified.Truncate(time.Second).After(t)
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.TrimSpace(coding) != "*" {
				continue
			}
			if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
				if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}
