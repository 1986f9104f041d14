// Package destination tests, over real processes, that a destination
// mirroring a Source through the hub ends exactly in step with it: the
// hub, examples/dirsource and cmd/subscriber run as separate binaries; the
// subscriber is stopped while the Source changes and catches up when it
// comes back; the hub is killed with SIGKILL and restarted on the same
// data directory in the middle of the changes.
package destination

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/examples/dirsource/source"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

const token = "integration-token-0123456789"

// world is one hub, one dirsource and one subscriber with their directories.
type world struct {
	t                 *testing.T
	hubArgs           []string
	hub, src, sub     *proc
	hubURL, srcURL    string
	srcDir, mirrorDir string
	statePath         string
	subArgs           []string
	rng               *rand.Rand
	lastEdit          time.Time
	subOutputs        []*proc
}

func newWorld(t *testing.T, transport, redisURL string) *world {
	w := &world{t: t, rng: rand.New(rand.NewPCG(1, 2))}
	root := t.TempDir()
	w.srcDir, w.mirrorDir = filepath.Join(root, "source"), filepath.Join(root, "mirror")
	w.statePath = w.mirrorDir + ".rshub-state.json"
	if err := os.MkdirAll(w.srcDir, 0o755); err != nil {
		t.Fatal(err)
	}
	hubPort, natsPort, srcPort, cbPort := freePort(t), freePort(t), freePort(t), freePort(t)
	// the hub's public URL is a validating proxy in front of it (as a hub
	// behind a reverse proxy): every answer to the Source and the
	// subscriber is checked against the contract
	w.hubURL = hubtest.LoadContract(t).Proxy(t, fmt.Sprintf("http://127.0.0.1:%d/", hubPort))
	w.srcURL = fmt.Sprintf("http://127.0.0.1:%d", srcPort)
	channels := filepath.Join(root, "channels.json")
	ch := fmt.Sprintf(`[{"topic": %q, "name": "files", "trust": "token", "token": %q, "capabilityList": %q}]`, w.srcURL+"/topic", token, w.srcURL+"/capabilitylist.xml")
	if err := os.WriteFile(channels, []byte(ch), 0o644); err != nil {
		t.Fatal(err)
	}
	natsPW := filepath.Join(root, "nats-password") // the subscriber reads the log as the hub's read user
	if err := os.WriteFile(natsPW, []byte("reader-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.hubArgs = []string{"--listen", fmt.Sprintf("127.0.0.1:%d", hubPort), "--hub-url", w.hubURL, "--data-dir", filepath.Join(root, "hubdata"),
		"--nats-listen", fmt.Sprintf("127.0.0.1:%d", natsPort), "--nats-password-file", natsPW, "--channels", channels, "--allow-networks", "127.0.0.0/8",
		"--retry", "100ms,x2,max=400ms,attempts=4,jitter=0.1", "--rotate-entries", "7", "--log-level", "warn", "--shutdown-timeout", "5s"}
	if redisURL != "" {
		w.hubArgs = append(w.hubArgs, "--redis-url", redisURL)
	}
	w.startHub()
	w.src = start(t, "dirsource", bins.dirsource, "--dir", w.srcDir, "--listen", fmt.Sprintf("127.0.0.1:%d", srcPort),
		"--hub", w.hubURL, "--token", token, "--interval", "150ms")
	waitHTTP(t, w.src, w.srcURL+"/status")
	w.subArgs = []string{"--source", w.srcURL + "/", "--mirror", w.mirrorDir, "--base-url", w.srcURL + "/files/",
		"--transport", transport, "--listen", fmt.Sprintf("127.0.0.1:%d", cbPort), "--lease", "1h", "--resync", "0",
		"--json", "--log-level", "info", "--nats-url", fmt.Sprintf("nats://reader:reader-secret@127.0.0.1:%d", natsPort)}
	return w
}

func (w *world) startHub() {
	w.hub = start(w.t, "hub", bins.hub, w.hubArgs...)
	waitHTTP(w.t, w.hub, w.hubURL+"readyz")
}

func (w *world) startSubscriber() {
	w.sub = start(w.t, "subscriber", bins.subscriber, w.subArgs...)
	w.subOutputs = append(w.subOutputs, w.sub)
}

// edit makes n random creates, updates and deletes in the Source directory.
func (w *world) edit(n int) {
	w.t.Helper()
	for range n {
		name := fmt.Sprintf("d%d/f%02d.txt", w.rng.IntN(3), w.rng.IntN(40))
		p := filepath.Join(w.srcDir, filepath.FromSlash(name))
		if _, err := os.Stat(p); err == nil && w.rng.IntN(3) == 0 {
			if err := os.Remove(p); err != nil {
				w.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		content := bytes.Repeat([]byte(fmt.Sprintf("%s v%d\n", name, w.rng.IntN(1e6))), 1+w.rng.IntN(200))
		if err := os.WriteFile(p, content, 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	w.lastEdit = time.Now()
}

// published waits until the Source has announced every edit so far and
// returns its status.
func (w *world) published() source.Status {
	w.t.Helper()
	var st source.Status
	waitFor(w.t, 60*time.Second, "dirsource publishes the edits", func() (bool, string) {
		if err := getJSON(w.srcURL+"/status", &st); err != nil {
			return false, err.Error()
		}
		return st.CleanScan.After(w.lastEdit) && st.LastError == "", fmt.Sprintf("clean scan %s, last edit %s, error %q", st.CleanScan, w.lastEdit, st.LastError)
	})
	return st
}

// synced waits until the mirror equals the Source directory byte for byte
// and the subscriber's state reaches the Source's last acknowledged until.
func (w *world) synced(timeout time.Duration) (source.Status, mirror.State) {
	w.t.Helper()
	st := w.published()
	var ms mirror.State
	waitFor(w.t, timeout, "mirror in step with the Source", func() (bool, string) {
		var err error
		if ms, err = mirror.LoadState(w.statePath); err != nil {
			return false, err.Error()
		}
		if !ms.Until.Equal(st.Until) {
			return false, fmt.Sprintf("subscriber until %s, Source until %s", ms.Until, st.Until)
		}
		if diff := compareDirs(w.srcDir, w.mirrorDir); diff != "" {
			return false, diff
		}
		return true, ""
	})
	return st, ms
}

// compareDirs describes the first difference between two trees of regular
// files, or returns "".
func compareDirs(a, b string) string {
	fa, fb := files(a), files(b)
	for name, ca := range fa {
		cb, ok := fb[name]
		if !ok {
			return "mirror lacks " + name
		}
		if !bytes.Equal(ca, cb) {
			return "content differs: " + name
		}
	}
	for name := range fb {
		if _, ok := fa[name]; !ok {
			return "mirror has extra " + name
		}
	}
	return ""
}

func files(root string) map[string][]byte {
	out := map[string][]byte{}
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return nil
	})
	return out
}

// events reads the JSON events every subscriber run printed.
func (w *world) events() []mirror.Event {
	var out []mirror.Event
	for _, p := range w.subOutputs {
		sc := bufio.NewScanner(strings.NewReader(p.Output(0)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e mirror.Event
			if line := sc.Text(); strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &e) == nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// checkAcknowledgedApplied checks that every notification the hub
// acknowledged to the Source reached the mirror: either applied as a
// notification or covered by a catch-up that reached past its until.
func (w *world) checkAcknowledgedApplied(st source.Status, ms mirror.State, wantSeq bool) {
	w.t.Helper()
	evs := w.events()
	var maxSeq uint64
	for _, p := range st.Published {
		maxSeq = max(maxSeq, p.Seq)
		covered := false
		for _, e := range evs {
			if (e.Kind == mirror.EventNotification || e.Kind == mirror.EventDuplicate) && e.Until.Equal(p.Until) ||
				e.Kind == mirror.EventCaughtUp && !e.Until.Before(p.Until) {
				covered = true
				break
			}
		}
		if !covered {
			w.t.Errorf("acknowledged seq %d (until %s) never reached the mirror", p.Seq, p.Until)
		}
	}
	if wantSeq && ms.Seq != maxSeq {
		w.t.Errorf("subscriber state seq %d, hub acknowledged up to %d", ms.Seq, maxSeq)
	}
	w.t.Logf("%d notifications acknowledged (last seq %d); subscriber state until %s seq %d", len(st.Published), maxSeq, ms.Until.Format(time.RFC3339Nano), ms.Seq)
}

// scenario runs the scripted sequence and returns the measured catch-up.
func scenario(t *testing.T, transport, redisURL string) {
	w := newWorld(t, transport, redisURL)

	// 1. online: the subscriber follows from the start
	w.edit(12)
	w.published()
	w.startSubscriber()
	w.synced(60 * time.Second)

	// 2. offline: stop the subscriber, change the Source over several notifications
	w.sub.Stop(t)
	for range 15 {
		w.edit(10)
		w.published()
	}
	restart := time.Now()
	w.startSubscriber()
	w.synced(60 * time.Second)
	catchUp := time.Since(restart)
	t.Logf("catch-up after being offline for 15 notifications (%s transport): %s from restart to mirror in step", transport, catchUp.Round(time.Millisecond))
	for _, e := range w.events() {
		if e.Kind == mirror.EventCaughtUp && e.Time.After(restart) {
			t.Logf("  subscriber catch-up event: %d entries to %s in %s", e.Entries, e.Until.Format(time.RFC3339Nano), e.Elapsed.Round(time.Millisecond))
		}
	}

	// 3. the hub dies (SIGKILL) while the Source keeps changing; it comes back on the same data
	phase := time.Now()
	w.edit(6)
	w.published()
	w.hub.Kill()
	w.edit(6) // the Source's publish fails and stays pending, unchanged
	w.startHub()
	w.edit(6)
	w.published()
	w.synced(90 * time.Second)
	t.Logf("hub SIGKILL and restart phase: mirror in step %s after its first edit", time.Since(phase).Round(time.Millisecond))

	// 4. one more change after everything settled
	w.edit(4)
	st, ms := w.synced(60 * time.Second)
	w.checkAcknowledgedApplied(st, ms, transport != "webhook")
	if len(files(w.mirrorDir)) == 0 {
		t.Fatal("the scenario mirrored nothing")
	}
}

// TestDestination_Webhook_EmbeddedNATS: webhook callbacks, hub state in
// JetStream KV on the embedded NATS server.
func TestDestination_Webhook_EmbeddedNATS(t *testing.T) {
	scenario(t, "webhook", "")
}

// TestDestination_WebSocket_Redis: WebSocket replay from the state's
// sequence, hub state in a real redis-server.
func TestDestination_WebSocket_Redis(t *testing.T) {
	scenario(t, "websocket", testenv.Redis(t))
}

// TestDestination_NATS_EmbeddedNATS: JetStream replay from the state's
// sequence on the hub's embedded NATS server, which dies with the hub.
func TestDestination_NATS_EmbeddedNATS(t *testing.T) {
	scenario(t, "nats", "")
}
