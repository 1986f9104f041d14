package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/changefeed"
	pullsource "github.com/rshub/rshub/examples/pullsource/source"
	"github.com/rshub/rshub/integration/series"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
	"github.com/rshub/rshub/wire"
)

// thinTopic is a Source's topic document for thin pings: a change
// notification that set replaces, served with an ETag.
type thinTopic struct {
	mu   sync.Mutex
	body string
	n    int
}

func (s *thinTopic) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	body, n := s.body, s.n
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("ETag", fmt.Sprintf(`"%d"`, n))
	_, _ = io.WriteString(w, body)
}

// set makes the document notification k, naming http://example.com/thin/k.
func (s *thinTopic) set(k int) {
	body := strings.Replace(series.Notification(k), "http://example.com/n/", "http://example.com/thin/", 1)
	s.mu.Lock()
	s.body, s.n = body, k
	s.mu.Unlock()
}

// mercureEvent is an update as the browser's EventSource gave it.
type mercureEvent struct {
	ID   string `json:"id"`
	Data string `json:"data"`
}

// mercureSubscriber is a Mercure client nobody here wrote, subscribed to
// topics of a hub.
type mercureSubscriber interface {
	// state returns how often the client opened its stream and saw it
	// fail, and the updates it received, in order.
	state() (opens, errors int, events []mercureEvent)
}

// mercurePage is a page of the hub's origin in headless Chromium holding
// one EventSource: the browser's own Mercure client, which reconnects by
// itself with Last-Event-ID.
type mercurePage struct{ b *dashBrowser }

// mercureSubscribeJS opens the EventSource on the topics (a JSON list)
// and records its updates, openings and errors.
const mercureSubscribeJS = `(() => {
  const u = new URL("/.well-known/mercure", location.href);
  for (const t of %s) u.searchParams.append("match", t);
  window.got = []; window.opens = 0; window.errors = 0;
  const es = new EventSource(u);
  es.onopen = () => { window.opens++; };
  es.onerror = () => { window.errors++; };
  es.onmessage = (e) => { window.got.push({id: e.lastEventId, data: e.data}); };
  return true;
})()`

// subscribeInBrowser opens a page of the hub's origin and its EventSource.
func subscribeInBrowser(t *testing.T, hubURL string, topics []string) mercureSubscriber {
	t.Helper()
	p := &mercurePage{b: newDashBrowser(t, 3*time.Minute)}
	list, _ := json.Marshal(topics)
	p.b.run("open the hub's origin", chromedp.Navigate(hubURL+"readyz"))
	if _, err := chromedp.Run(p.b.ctx, chromedp.Evaluate[bool](fmt.Sprintf(mercureSubscribeJS, list))); err != nil {
		p.b.fail("open the EventSource", err)
	}
	return p
}

func (p *mercurePage) state() (int, int, []mercureEvent) {
	p.b.t.Helper()
	s, err := chromedp.Run(p.b.ctx, chromedp.Evaluate[string](`JSON.stringify({opens: window.opens, errors: window.errors, got: window.got})`))
	if err != nil {
		p.b.fail("read the page's updates", err)
	}
	var v struct {
		Opens, Errors int
		Got           []mercureEvent
	}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		p.b.t.Fatalf("the page's updates: %v", err)
	}
	return v.Opens, v.Errors, v.Got
}

// mercureHubProc is a hub process with a data directory, killed and
// started again on the same address.
type mercureHubProc struct {
	proc   *testproc.Proc
	url    string
	admin  followHub
	client *http.Client
}

// ready waits for the hub's /readyz.
func (h *mercureHubProc) ready(t *testing.T) {
	t.Helper()
	testproc.WaitHTTP(t, h.proc, h.url+"readyz", 60*time.Second)
}

// fatPing publishes notification n to topic, retrying what the hub does
// not acknowledge (a restarting hub) until the deadline.
func (h *mercureHubProc) fatPing(t *testing.T, topic string, n int) {
	t.Helper()
	h.post(t, fmt.Sprintf("fat ping %d", n), func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, h.url, strings.NewReader(series.Notification(n)))
		if err == nil {
			req.Header.Set("Content-Type", "application/xml")
			req.Header.Set("Link", "<"+topic+`>; rel="self", <`+h.url+`>; rel="hub"`)
		}
		return req, err
	})
}

// thinPing asks the hub to fetch topic.
func (h *mercureHubProc) thinPing(t *testing.T, topic string) {
	t.Helper()
	h.post(t, "thin ping", func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, h.url, strings.NewReader(url.Values{"hub.mode": {"publish"}, "hub.url": {topic}}.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		return req, err
	})
}

// post sends a publish until the hub answers 200; any 4xx fails the test.
func (h *mercureHubProc) post(t *testing.T, what string, build func() (*http.Request, error)) {
	t.Helper()
	var last string
	testproc.WaitFor(t, 30*time.Second, what+" acknowledged", func() (bool, string) {
		req, err := build()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			last = err.Error()
			return false, last
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 == 4 {
			t.Fatalf("%s: %d %s", what, resp.StatusCode, body)
		}
		last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		return resp.StatusCode == http.StatusOK, last
	})
}

// TestMercure_BrowserEventSourceGetsEveryUpdateOnceAcrossHubSIGKILL runs
// mercureAcrossRestart with the browser's own EventSource (headless
// Chromium).
func TestMercure_BrowserEventSourceGetsEveryUpdateOnceAcrossHubSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a hub process and Chromium")
	}
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	mercureAcrossRestart(t, subscribeInBrowser)
}

// mercureAcrossRestart: a Mercure client nobody here wrote subscribes
// with match to two ResourceSync channels of a hub process: one taking
// fat pings and thin pings (its topic a loopback Source's change
// notification), one following a pull-only Source. The hub is killed with
// SIGKILL with updates still on their way; while it is down the Sources
// change; it starts again on the same address and data. The client
// reconnects by itself with Last-Event-ID and ends with every acknowledged
// update exactly once, in the log's order, by id.
func mercureAcrossRestart(t *testing.T, subscribe func(t *testing.T, hubURL string, topics []string) mercureSubscriber) {
	root := t.TempDir()
	bin, err := testproc.Build(root, "hub", "./cmd/hub")
	if err != nil {
		t.Fatal(err)
	}
	thin := &thinTopic{}
	thinSrv := httptest.NewServer(thin)
	defer thinSrv.Close()
	pingTopic := thinSrv.URL + "/notification.xml"
	follow := startFollowSource(t, pullsource.Config{RotateEvery: 3})

	port, natsPort := testenv.FreePort(t), testenv.FreePort(t)
	hubURL := fmt.Sprintf("http://127.0.0.1:%d/", port)
	const token = "mercure-admin-token-0123456789"
	channels := filepath.Join(root, "channels.json")
	list, _ := json.Marshal([]map[string]any{
		{"name": "pinged", "topic": pingTopic, "trust": "open"},
		{"name": "pulled", "follow": "http://" + follow.addr + "/", "pollInterval": "50ms"},
	})
	if err := os.WriteFile(channels, list, 0o644); err != nil {
		t.Fatal(err)
	}
	h := &mercureHubProc{url: hubURL, admin: followHub{url: hubURL, token: token}, client: &http.Client{Timeout: 10 * time.Second}}
	h.proc = testproc.Start(t, "hub", bin, "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--data-dir", filepath.Join(root, "data"),
		"--nats-listen", fmt.Sprintf("127.0.0.1:%d", natsPort), "--channels", channels, "--allow-networks", "127.0.0.0/8",
		"--admin-token", token, "--log-level", "warn", "--shutdown-timeout", "5s")
	h.ready(t)
	_, b := h.admin.do(t, http.MethodGet, "/admin/channels/pulled", nil)
	var pulled struct{ Topic string }
	if err := json.Unmarshal(b, &pulled); err != nil || pulled.Topic == "" {
		t.Fatalf("the followed channel: %v %s", err, b)
	}
	waitFor(t, 20*time.Second, "the follower read its baseline", func() bool { return h.admin.followStatus(t, "pulled").Polls > 0 })

	client := subscribe(t, hubURL, []string{pingTopic, pulled.Topic})
	// waitClient waits until the client has opened its stream and seen it
	// fail at least so often
	waitClient := func(what string, opens, errors int) {
		t.Helper()
		testproc.WaitFor(t, 60*time.Second, what, func() (bool, string) {
			o, e, _ := client.state()
			return o >= opens && e >= errors, fmt.Sprintf("opened %d times, failed %d", o, e)
		})
	}
	waitClient("the client's stream open", 1, 0)

	// fat and thin pings are one series of notifications on the channel
	// (each window follows the last); the thin ones name other resources
	n := 0
	var fats, thins []string
	setThin := func() {
		n++
		thin.set(n)
		thins = append(thins, fmt.Sprintf("http://example.com/thin/%d", n))
	}
	round := func(fatPings, thinPings, changes int) {
		for range fatPings {
			n++
			h.fatPing(t, pingTopic, n)
			fats = append(fats, fmt.Sprintf("http://example.com/n/%d", n))
		}
		for range thinPings {
			setThin()
			h.thinPing(t, pingTopic)
		}
		follow.src.Change(changes)
	}
	round(3, 2, 4)
	check := func(what string) {
		t.Helper()
		var last string
		testproc.WaitFor(t, 60*time.Second, what, func() (bool, string) {
			_, _, events := client.state()
			ok, why := mercureComplete(t, events, fats, thins, follow.src.History())
			last = why
			return ok, why
		})
		t.Logf("%s: %s", what, last)
	}
	check("the first updates")

	// updates on their way: publish, then SIGKILL at once
	round(2, 1, 2)
	h.proc.Signal(syscall.SIGKILL)
	<-h.proc.Done()
	waitClient("the client sees the hub gone", 1, 1)
	// while the hub is down: the followed Source changes, the thin ping's
	// topic document too (pinged once the hub is back)
	follow.src.Change(3)
	setThin()

	h.proc.Restart(t)
	h.ready(t)
	// published before the client is back (it waits the stream's retry
	// delay): only its Last-Event-ID brings these
	h.thinPing(t, pingTopic)
	round(1, 0, 0)
	waitClient("the client reconnected by itself", 2, 1)
	round(2, 1, 2)
	check("every update after the restart")
	opens, errors, _ := client.state()
	t.Logf("the client opened its stream %d times and saw it fail %d times", opens, errors)
}

// mercureComplete reports whether events hold the resources of the fat
// pings and of the thin pings as published and the followed Source's
// history, each exactly once and in order, with ids the log's cursors
// increasing. A duplicate, an update out of order or one that is no
// notification fails the test.
func mercureComplete(t *testing.T, events []mercureEvent, wantFat, wantThin []string, history []pullsource.Change) (bool, string) {
	t.Helper()
	var fats, thin []string
	var followed []pullsource.Change
	var prev wire.Cursor
	for i, e := range events {
		c, err := wire.ParseCursor(e.ID)
		if err != nil {
			t.Fatalf("update %d: id %q is no cursor: %v", i, e.ID, err)
		}
		if i > 0 && (c.Epoch != prev.Epoch || c.Seq <= prev.Seq) {
			t.Fatalf("update %d: id %s after %s: out of order or twice", i, e.ID, prev)
		}
		prev = c
		doc, err := changefeed.Parse(bytes.NewReader([]byte(e.Data)), changefeed.Options{})
		if err != nil {
			t.Fatalf("update %d (id %s): not a change notification: %v\n%s", i, e.ID, err, e.Data)
		}
		for _, en := range doc.Entries {
			switch {
			case strings.HasPrefix(en.Loc, "http://example.com/n/"):
				fats = append(fats, en.Loc)
			case strings.HasPrefix(en.Loc, "http://example.com/thin/"):
				thin = append(thin, en.Loc)
			default:
				followed = append(followed, pullsource.Change{Loc: en.Loc, Change: en.MD.Change, DateTime: en.MD.DateTime.Time})
			}
		}
	}
	prefixOf := func(what string, got, want []string) bool {
		if len(got) > len(want) {
			t.Fatalf("%s: %d received, %d published: %v", what, len(got), len(want), got)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: update %d names %s, want %s", what, i, got[i], want[i])
			}
		}
		return len(got) == len(want)
	}
	locs := make([]string, len(followed))
	for i, c := range followed {
		locs[i] = c.Loc
	}
	hist := make([]string, len(history))
	for i, c := range history {
		hist[i] = c.Loc
	}
	doneFat := prefixOf("fat pings", fats, wantFat)
	doneThin := prefixOf("thin pings", thin, wantThin)
	doneFollow := prefixOf("followed Source", locs, hist)
	for i := range followed {
		if followed[i].Change != history[i].Change || !followed[i].DateTime.Equal(history[i].DateTime) {
			t.Fatalf("followed Source: entry %d is %+v, want %+v", i, followed[i], history[i])
		}
	}
	why := fmt.Sprintf("%d updates: %d of %d fat pings, %d of %d thin pings, %d of %d followed changes",
		len(events), len(fats), len(wantFat), len(thin), len(wantThin), len(followed), len(history))
	return doneFat && doneThin && doneFollow, why
}
