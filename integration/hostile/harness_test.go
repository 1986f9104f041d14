// Package hostile attacks a real hub from outside, over real HTTP on
// loopback: every endpoint with generated hostile input, checking after each
// case that the hub is still ready, that it answered the documented status
// with a reason, and, at the end, that the log holds exactly what the hub
// acknowledged.
package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/publisher"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

const adminToken = "hostile-suite-admin-token"

// target is a hub under attack and what it acknowledged.
type target struct {
	t        *testing.T
	base     string // http://127.0.0.1:port
	hubURL   string
	topic    string // the demo channel's hosted topic
	natsURL  string
	callback string // a loopback subscriber that echoes challenges
	client   *http.Client

	mu    sync.Mutex
	acked map[uint64][]byte // sequence → body of every acknowledged publish
	until time.Time         // the demo channel's last acknowledged until
	cases map[string]int    // hostile cases run, per class
	took  map[string]time.Duration
}

// startTarget runs a hub with default settings except: an admin token,
// --open-topics with a small channel bound, and the embedded NATS server
// listening on loopback so the test can read the log itself (anonymous
// read).
func startTarget(t *testing.T, options ...func(*server.Config)) *target {
	t.Helper()
	natsPort := testenv.FreePort(t)
	st := servertest.Start(t, nil, append([]func(*server.Config){func(c *server.Config) {
		c.AdminToken = adminToken
		c.OpenTopics = true
		c.MaxOpenChannels = 40
		c.NATSListen = "127.0.0.1:" + strconv.Itoa(natsPort)
		c.NATSAnonymousRead = true // the test reads the log (never writes it)
	}}, options...)...)
	sub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(sub.Close)
	tg := &target{
		t: t, base: "http://" + st.Addr, hubURL: st.HubURL, topic: "http://" + st.Addr + "/topics/demo",
		natsURL: fmt.Sprintf("nats://127.0.0.1:%d", natsPort), callback: sub.URL + "/cb",
		client: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		acked:  map[uint64][]byte{}, until: time.Now().UTC().Add(-time.Hour).Truncate(time.Second),
		cases: map[string]int{}, took: map[string]time.Duration{},
	}
	return tg
}

// answer is what the hub said.
type answer struct {
	status int
	body   string
	header http.Header
}

// do sends req and reads the whole answer.
func (tg *target) do(req *http.Request) answer {
	tg.t.Helper()
	resp, err := tg.client.Do(req)
	if err != nil {
		tg.t.Fatalf("%s %.120s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return answer{resp.StatusCode, "", resp.Header} // a WebSocket: nothing to read
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return answer{resp.StatusCode, string(b), resp.Header}
}

func (tg *target) request(method, path string, body io.Reader, header ...string) *http.Request {
	tg.t.Helper()
	req, err := http.NewRequest(method, tg.base+path, body)
	if err != nil {
		tg.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return req
}

// form posts a form to the hub URL; values alternate names and values.
func (tg *target) form(values ...string) *http.Request {
	var b strings.Builder
	for i := 0; i+1 < len(values); i += 2 {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(queryEscape(values[i]) + "=" + queryEscape(values[i+1]))
	}
	return tg.request(http.MethodPost, "/", strings.NewReader(b.String()), "Content-Type", "application/x-www-form-urlencoded")
}

// fat posts body as a fat ping for topic.
func (tg *target) fat(topic string, body []byte, header ...string) *http.Request {
	h := append([]string{"Content-Type", "application/xml", "Link", "<" + topic + `>; rel="self", <` + tg.hubURL + `>; rel="hub"`}, header...)
	return tg.request(http.MethodPost, "/", bytes.NewReader(body), h...)
}

func (tg *target) admin(method, path string) *http.Request {
	return tg.request(method, path, nil, "Authorization", "Bearer "+adminToken)
}

// check runs one hostile case: the answer's status must be one of want,
// a refusal must carry a reason, and the hub must be ready afterwards.
func (tg *target) check(class, name string, req *http.Request, want ...int) answer {
	tg.t.Helper()
	return tg.checkPublish(class, name, req, nil, want...)
}

// checkPublish is check for a fat ping of body: an acknowledged one is
// recorded, whatever channel took it.
func (tg *target) checkPublish(class, name string, req *http.Request, body []byte, want ...int) answer {
	tg.t.Helper()
	start := time.Now()
	a := tg.do(req)
	if a.header.Get("Rshub-Seq") != "" {
		if body == nil {
			tg.t.Fatalf("%s/%s: acknowledged (%s) what was not a publish", class, name, a.header.Get("Rshub-Seq"))
		}
		tg.record(a, body)
	}
	tg.mu.Lock()
	tg.cases[class]++
	tg.took[class] += time.Since(start)
	tg.mu.Unlock()
	ok := false
	for _, w := range want {
		ok = ok || a.status == w
	}
	if !ok {
		tg.t.Errorf("%s/%s: status %d %.300q, want one of %v", class, name, a.status, a.body, want)
	}
	if a.status >= 400 && strings.TrimSpace(a.body) == "" {
		tg.t.Errorf("%s/%s: %d without a reason", class, name, a.status)
	}
	if a.status >= 500 && a.status != http.StatusBadGateway && a.status != http.StatusServiceUnavailable {
		tg.t.Errorf("%s/%s: server error %d %.300q", class, name, a.status, a.body)
	}
	tg.mustBeReady(class + "/" + name)
	return a
}

// mustBeReady fails the test unless /readyz answers 200 now.
func (tg *target) mustBeReady(after string) {
	tg.t.Helper()
	a := tg.do(tg.request(http.MethodGet, "/readyz", nil))
	if a.status != http.StatusOK {
		tg.t.Fatalf("after %s the hub is not ready: %d %s", after, a.status, a.body)
	}
}

// record notes an acknowledged fat ping on the demo channel.
func (tg *target) record(a answer, body []byte) {
	tg.t.Helper()
	if a.status != http.StatusOK {
		return
	}
	seq, err := strconv.ParseUint(a.header.Get("Rshub-Seq"), 10, 64)
	if err != nil {
		tg.t.Fatalf("200 without Rshub-Seq: %v", err)
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if prev, dup := tg.acked[seq]; dup && !bytes.Equal(prev, body) {
		tg.t.Fatalf("sequence %d acknowledged for two different bodies", seq)
	}
	tg.acked[seq] = body
	if doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Lenient}); err == nil && !doc.MD.Until.IsZero() {
		if u := doc.MD.Until.Time; u.After(tg.until) {
			tg.until = u
		}
	}
}

// next builds a valid notification continuing the demo channel, ending at
// until (zero: one second after the last until).
func (tg *target) next(until time.Time, locs ...string) []byte {
	tg.t.Helper()
	tg.mu.Lock()
	from := tg.until
	tg.mu.Unlock()
	if until.IsZero() {
		until = from.Add(time.Second)
	}
	var changes []publisher.Change
	for _, l := range locs {
		changes = append(changes, publisher.Change{Loc: l, Change: changefeed.Updated, Length: -1})
	}
	body, err := publisher.Build(publisher.Window{From: from, Until: until}, changes, "")
	if err != nil {
		tg.t.Fatal(err)
	}
	return body
}

// publishValid publishes a correct notification and requires a 200: the
// channel is not blocked by whatever came before.
func (tg *target) publishValid(after string) {
	tg.t.Helper()
	body := tg.next(time.Time{}, "http://example.org/after/"+strconv.Itoa(len(tg.acked)))
	a := tg.do(tg.fat(tg.topic, body))
	if a.status != http.StatusOK {
		tg.t.Fatalf("after %s a correct notification is refused: %d %s", after, a.status, a.body)
	}
	tg.record(a, body)
}

// verifyLog reads the log through NATS and requires that it holds exactly
// the acknowledged records, byte for byte.
func (tg *target) verifyLog() {
	tg.t.Helper()
	tg.mu.Lock()
	defer tg.mu.Unlock()
	n, bodies := tg.published(tg.acked)
	if n != len(tg.acked) {
		tg.t.Errorf("the log holds %d published records; the hub acknowledged %d", n, len(tg.acked))
	}
	for seq, body := range tg.acked {
		got, ok := bodies[seq]
		if !ok {
			tg.t.Errorf("acknowledged sequence %d is not in the log", seq)
			continue
		}
		if !bytes.Equal(got, body) {
			tg.t.Errorf("sequence %d holds other bytes than were acknowledged", seq)
		}
	}
}

// published counts the records of the log that somebody published (the
// hub's own framework notifications, on wire.FrameworkChannel channels,
// are left out) and returns the bodies of those whose sequence is in want.
func (tg *target) published(want map[uint64][]byte) (int, map[uint64][]byte) {
	tg.t.Helper()
	nc, err := nats.Connect(tg.natsURL)
	if err != nil {
		tg.t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		tg.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, wire.Stream)
	if err != nil {
		tg.t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		tg.t.Fatal(err)
	}
	n, bodies := 0, map[uint64][]byte{}
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			tg.t.Fatalf("log record %d: %v", seq, err)
		}
		if _, framework := wire.FrameworkParent(wire.SubjectChannel(m.Subject)); framework {
			continue
		}
		n++
		if _, ok := want[seq]; ok {
			bodies[seq] = m.Data
		}
	}
	return n, bodies
}

// queryEscape escapes everything but unreserved characters, so odd bytes
// (NUL, invalid UTF-8) travel as they are meant to.
func queryEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
