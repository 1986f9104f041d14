package staticsource

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// startServer starts a static-file server serving dir, handing each request
// it logs to onRequest.
type startServer func(t *testing.T, dir string, onRequest func(requestLog)) *staticServer

func nginxDefault(t *testing.T, dir string, on func(requestLog)) *staticServer {
	return startNginx(t, dir, true, on)
}

func nginxETagOff(t *testing.T, dir string, on func(requestLog)) *staticServer {
	return startNginx(t, dir, false, on)
}

func pythonHTTPServer(t *testing.T, dir string, on func(requestLog)) *staticServer {
	return startPython(t, dir, on)
}

// scenario is a Source written while the hub follows it: the hub polls it
// every interval; each time the hub reads the open list, the Source writes
// in that same second (one to burst changes, or a same-size rewrite of the
// list's last change), and closes the list when it holds rotateEvery
// changes; it stops after changes changes or once duration has passed and
// it closed a list and wrote in the second of a read, whichever comes
// first, its last write a same-size rewrite in the second of a read.
type scenario struct {
	start       startServer
	interval    string
	rotateEvery int
	burst       int // the most changes written after one read
	changes     int
	duration    time.Duration
	seed        uint64
}

// figures are what a run measured.
type figures struct {
	server                          string
	written, rewrites, rotations    int
	held, published                 int
	reads, notModified, sameSecond  int
	polls, requests, hub304, errors uint64
	elapsed                         time.Duration
}

func (f figures) String() string {
	return fmt.Sprintf("%s: %d changes written (%d same-size rewrites, %d lists closed), the lists hold %d, %d published in order, none twice, no gap; "+
		"the hub read the open list %d times (%d answered 304), the Source wrote in the second of %d of those reads; follow status: %d polls, %d GETs, %d answered 304, %d errors; %s",
		f.server, f.written, f.rewrites, f.rotations, f.held, f.published, f.reads, f.notModified, f.sameSecond, f.polls, f.requests, f.hub304, f.errors, f.elapsed.Round(time.Second))
}

// followWhileWriting runs a scenario and checks that every change the
// Source's lists hold is published once, in order, with no gap, and that a
// mirror ends equal to the Source's resources.
func followWhileWriting(t *testing.T, sc scenario) figures {
	dir := t.TempDir()
	src := newFileSource(t, dir, sc.rotateEvery, sc.seed)
	var (
		mu      sync.Mutex
		writing bool
		finale  bool // the next read of the open list has the last write
		fig     figures
	)
	// the Source writes as soon as the hub has read its open list
	onRequest := func(r requestLog) {
		mu.Lock()
		defer mu.Unlock()
		if !writing || r.path != src.openPath() {
			return
		}
		read := time.Now().Unix()
		fig.reads++
		if r.status == 304 {
			fig.notModified++
		}
		switch p := src.rng.Float64(); {
		case finale:
			// the last write: a same-size rewrite in the second of a read,
			// then quiet
			if src.rewrite() {
				writing = false
				fig.written, fig.rewrites, fig.rotations = src.quiet()
			} else {
				src.change()
			}
		case p < 0.2:
			if !src.rewrite() {
				src.change()
			}
		default:
			for range 1 + src.rng.IntN(sc.burst) {
				src.change()
			}
		}
		if time.Now().Unix() == read {
			fig.sameSecond++
		}
	}
	srv := sc.start(t, dir, onRequest)
	fig.server = srv.name
	src.start(srv.base)
	h := startHub(t)
	rcv := newReceiver(t)
	topic := h.follow(t, "static", srv.base+"/index.xml", sc.interval, rcv)
	mirrorDir := startMirror(t, h, srv.base, topic, "static")

	began := time.Now()
	mu.Lock()
	writing = true
	mu.Unlock()
	// a run ends by its count of changes, or by its duration once it has
	// what it is there to prove (a list closed, a write in the second of a
	// read), however few polls a busy machine made in that time
	waitFor(t, sc.duration+2*time.Minute, "the Source wrote its changes as the hub read it", func() bool {
		changes, rotations := src.count()
		mu.Lock()
		sameSecond := fig.sameSecond
		mu.Unlock()
		return changes >= sc.changes || time.Since(began) >= sc.duration && rotations > 0 && sameSecond > 0
	})
	mu.Lock()
	finale = true
	mu.Unlock()
	waitFor(t, 2*time.Minute, "the Source's last write, a same-size rewrite in the second of a read", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !writing
	})
	final := src.final()
	fig.held = len(final)

	// the Source is quiet: every change its lists hold comes, in a later
	// second at the latest
	holds := func() bool {
		ids, _, _ := rcv.got()
		have := map[string]bool{}
		for _, id := range ids {
			have[id] = true
		}
		for _, id := range final {
			if !have[id] {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(60 * time.Second)
	for !holds() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
	ids, errs, gaps := rcv.got()
	if len(errs) > 0 {
		t.Errorf("receiver: %v", errs)
	}
	if gaps > 0 {
		// a notification whose from is after the previous one's until: the
		// Source's lists are contiguous (a closed list's until is the next
		// one's from), so the hub told a gap that is not there
		t.Errorf("%d gaps between notifications (from after the previous until), want none", gaps)
	}
	if msg := checkPublished(ids, final, src.wrote); msg != "" {
		t.Fatalf("%s: %s (the Source wrote %d changes, its lists hold %d; the subscriber received %d entries)", srv.name, msg, fig.written, len(final), len(ids))
	}
	fig.published = len(final)
	res := filepath.Join(dir, "res")
	waitFor(t, 60*time.Second, "the mirror equals the Source's resources byte for byte", func() bool {
		return sameFiles(files(t, mirrorDir), files(t, res))
	})
	st := h.followStatus(t, "static")
	fig.polls, fig.requests, fig.hub304, fig.errors = st.Polls, st.Requests, st.NotModified, st.Errors
	fig.elapsed = time.Since(began)
	if st.Errors > 0 {
		t.Logf("the follower met %d errors (last: %s)", st.Errors, st.LastError)
	}
	if fig.rotations == 0 {
		t.Errorf("the Source never closed a list: the run proves nothing about rotations")
	}
	if fig.sameSecond == 0 {
		t.Errorf("the Source never wrote in the second of a read: the run proves nothing")
	}
	return fig
}

// checkPublished checks the changes published against the Source's: none
// twice, none the Source never wrote, and every change its lists hold, in
// their order (a change rewritten before the hub read it may be missing:
// the Source replaced it). It returns what is wrong, or "".
func checkPublished(published, final []string, wrote func(string) bool) string {
	seen := map[string]bool{}
	for _, id := range published {
		if seen[id] {
			return fmt.Sprintf("%s published twice", id)
		}
		seen[id] = true
		if !wrote(id) {
			return fmt.Sprintf("%s published, never written", id)
		}
	}
	inFinal := map[string]bool{}
	for _, id := range final {
		inFinal[id] = true
	}
	var got []string
	for _, id := range published {
		if inFinal[id] {
			got = append(got, id)
		}
	}
	if slices.Equal(got, final) {
		return ""
	}
	var missing []string
	for _, id := range final {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return fmt.Sprintf("every change published, not in the Source's order: %v", got)
	}
	return fmt.Sprintf("%d of the %d changes the lists hold were never published (first: %s)", len(missing), len(final), missing[0])
}

// A Source served by nginx as installed (an ETag built from mtime and
// size, and Last-Modified), written in the second of each of the hub's
// reads, including same-size rewrites and lists closed in that second.
func TestStaticSource_NginxDefaultETag_EveryChangePublishedOnceInOrder(t *testing.T) {
	t.Parallel()
	fig := followWhileWriting(t, scenario{start: nginxDefault, interval: "100ms", rotateEvery: 5, burst: 2, changes: 40, duration: 30 * time.Second, seed: 1})
	t.Log(fig)
}

// The same, nginx with `etag off`: Last-Modified is its only validator.
func TestStaticSource_NginxETagOff_EveryChangePublishedOnceInOrder(t *testing.T) {
	t.Parallel()
	fig := followWhileWriting(t, scenario{start: nginxETagOff, interval: "100ms", rotateEvery: 5, burst: 2, changes: 40, duration: 30 * time.Second, seed: 2})
	t.Log(fig)
}

// The same, `python3 -m http.server`: Last-Modified only, 304 when
// If-Modified-Since is at or after the file's mtime.
func TestStaticSource_PythonHTTPServer_EveryChangePublishedOnceInOrder(t *testing.T) {
	t.Parallel()
	fig := followWhileWriting(t, scenario{start: pythonHTTPServer, interval: "100ms", rotateEvery: 5, burst: 2, changes: 40, duration: 30 * time.Second, seed: 3})
	t.Log(fig)
}

// longRun is how long TestStaticSource_NginxRotatingEvery20WithOneSecondPolls
// runs: 20 s in the suite, 10 min with RSHUB_LONG=1.
func longRun() time.Duration {
	if os.Getenv("RSHUB_LONG") == "1" {
		return 10 * time.Minute
	}
	return 20 * time.Second
}

// An nginx-served Source rotating its Change List every 20 entries while
// the hub polls it every second, with nginx's default ETag and with
// `etag off`, side by side: every change published once, in order, and
// the mirror equal to the directory. RSHUB_LONG=1 runs it for 10 minutes.
func TestStaticSource_NginxRotatingEvery20WithOneSecondPolls(t *testing.T) {
	for i, start := range []startServer{nginxDefault, nginxETagOff} {
		t.Run([]string{"etag", "etag off"}[i], func(t *testing.T) {
			t.Parallel()
			fig := followWhileWriting(t, scenario{start: start, interval: "1s", rotateEvery: 20, burst: 4, changes: 1 << 30, duration: longRun(), seed: 20 + uint64(i)})
			t.Log(fig)
		})
	}
}
