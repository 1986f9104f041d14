package hubtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// The contract is the answers: every answer a fixture's server gives on a
// route of the admin API's OpenAPI document (admin/openapi.json, the one
// GET /admin/openapi.json serves), the admin routes and the hub URL's, is
// validated against it (status, content type, body) as it is answered, so
// that a mismatch fails the test that produced it. A path under /admin/
// the document does not name fails too, and so does a request answered
// below 400 that the document does not allow; a refused request is not
// validated: tests send bad ones on purpose.

// maxChecked bounds the body of an answer that is validated; a longer one
// is checked for its status and content type only.
const maxChecked = 4 << 20

// contractFile is the path of admin/openapi.json in the module's tree.
func contractFile() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("hubtest: no caller to find the module from")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "admin", "openapi.json"), nil
}

// Contract is the admin API's OpenAPI document with a router over it.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
}

// LoadContract reads and checks admin/openapi.json.
func LoadContract(tb testing.TB) *Contract {
	tb.Helper()
	path, err := contractFile()
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("hubtest: reading the contract: %v", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		tb.Fatalf("hubtest: the contract does not load: %v", err)
	}
	doc.Servers = nil // any host: the router matches paths
	router, err := legacy.NewRouter(doc)
	if err != nil {
		tb.Fatalf("hubtest: a router over the contract: %v", err)
	}
	return &Contract{doc: doc, router: router}
}

// Validating wraps h so that every answer on a route of the contract is
// validated against it; a mismatch is reported with tb.Errorf.
func (c *Contract) Validating(tb testing.TB, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.covers(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		var reqBody []byte
		if r.Body != nil && r.Body != http.NoBody {
			reqBody, _ = io.ReadAll(io.LimitReader(r.Body, maxChecked+1))
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(reqBody), r.Body))
		}
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if err := c.Check(r, reqBody, rec.status(), rec.Header(), rec.body.Bytes(), rec.long || rec.hijacked); err != nil {
			tb.Errorf("%s %s answered %d: the answer breaks the contract (admin/openapi.json): %v\n%s", r.Method, clip(r.URL.RequestURI()), rec.status(), err, clip(rec.body.String()))
		}
	})
}

// Validator returns a middleware that validates every answer of the
// handler it wraps against the contract, as Validating does: what
// server.Config.Middleware takes, so that a whole hub's answers are
// checked.
func Validator(tb testing.TB) func(http.Handler) http.Handler {
	c := LoadContract(tb)
	return func(h http.Handler) http.Handler { return c.Validating(tb, h) }
}

// covers reports whether path is one the contract speaks for: the admin
// API, the hub URL, /events and /ws.
func (c *Contract) covers(path string) bool {
	return strings.HasPrefix(path, "/admin/") || path == "/admin" || path == "/" || path == "/events" || path == "/ws"
}

// Check validates an answer (status, header, body) to r, whose body was
// reqBody, against the contract; headOnly skips the body.
func (c *Contract) Check(r *http.Request, reqBody []byte, status int, header http.Header, body []byte, headOnly bool) error {
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	u.Path, u.RawPath = r.URL.EscapedPath(), "" // an escaped slash stays in its segment
	req := r.Clone(context.Background())
	req.URL = &u
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		if strings.HasPrefix(r.URL.Path, "/admin") || errors.Is(err, routers.ErrMethodNotAllowed) {
			return fmt.Errorf("%s %s is not in the contract: %w", r.Method, r.URL.Path, err)
		}
		return nil // a path the hub serves beside the contract's (a topic, a pull document)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SchemaValidationOptions: formats()}}
	if status < 400 { // an accepted request is one the contract allows; a refused one may break it on purpose
		if err := c.checkXMLBody(r, route, in); err != nil {
			return err
		}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("the request accepted breaks the contract: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, SchemaValidationOptions: formats()}
	if headOnly {
		opts.ExcludeResponseBody = true
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: opts}
	if headOnly && status == http.StatusSwitchingProtocols {
		out.Header = header.Clone()
		out.Header.Del("Content-Type")
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return err
	}
	if bytes.Contains(body, []byte(zeroTime)) {
		return fmt.Errorf("an empty time reads %s: leave it out", zeroTime)
	}
	return nil
}

// formats are the string formats checked besides the validator's own: a
// "uri" is an absolute URI, as the hub's are (an empty one is not).
func formats() []openapi3.SchemaValidationOption {
	return []openapi3.SchemaValidationOption{
		openapi3.EnableFormatValidation(),
		openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(func(s string) error {
			if u, err := url.Parse(s); err != nil || !u.IsAbs() {
				return fmt.Errorf("%q is not an absolute URI", s)
			}
			return nil
		})),
	}
}

// zeroTime is Go's zero time as JSON writes it: what an empty time must
// never read as in an answer.
const zeroTime = `"0001-01-01T00:00:00Z"`

// checkXMLBody checks that an XML request body's media type is one the
// route's contract takes; the body itself is the hub's to judge (the
// validator decodes no XML), so in skips it.
func (c *Contract) checkXMLBody(r *http.Request, route *routers.Route, in *openapi3filter.RequestValidationInput) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !strings.HasSuffix(mt, "xml") {
		return nil
	}
	rb := route.Operation.RequestBody
	if rb == nil || rb.Value == nil || rb.Value.Content.Get(mt) == nil {
		return fmt.Errorf("the request accepted breaks the contract: its content type %s is not one the operation takes", mt)
	}
	opts := *in.Options
	opts.ExcludeRequestBody = true
	in.Options = &opts
	return nil
}

// clip shortens s for a test's message.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// recorder passes an answer on and keeps its status and body (up to
// maxChecked), flushing and hijacking as the writer it wraps does.
type recorder struct {
	http.ResponseWriter
	code     int
	body     bytes.Buffer
	long     bool // the body went beyond maxChecked
	hijacked bool
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	if !r.long {
		if r.body.Len()+len(p) > maxChecked {
			r.long = true
		} else {
			r.body.Write(p)
		}
	}
	return r.ResponseWriter.Write(p)
}

// Flush flushes the writer wrapped: an event stream is answered as it
// goes.
func (r *recorder) Flush() {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	r.long = true // a stream: its body is not one document
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over (a WebSocket upgrade).
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("hubtest: the writer cannot hijack")
	}
	r.hijacked = true
	if r.code == 0 {
		r.code = http.StatusSwitchingProtocols
	}
	return hj.Hijack()
}

// Unwrap returns the writer wrapped, for http.ResponseController.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
