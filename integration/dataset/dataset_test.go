// Package dataset tests, over real processes, that a destination keeping
// an RDF dataset Timbuctoo-style ends with exactly the Source's dataset:
// the hub, examples/datasetsource and cmd/subscriber in dataset mode run
// as separate binaries; the Source makes thousands of random quad
// additions and retractions over many .nqud patches; the subscriber is
// stopped for part of them and resumes; the hub is killed with SIGKILL and
// restarted on the same data directory in the middle.
package dataset

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/client/dataset"
	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
)

var bins struct{ hub, subscriber, source string }

func TestMain(m *testing.M) {
	testproc.Main(m, testproc.Binary{Out: &bins.hub, Name: "hub", Pkg: "./cmd/hub"},
		testproc.Binary{Out: &bins.subscriber, Name: "subscriber", Pkg: "./cmd/subscriber"},
		testproc.Binary{Out: &bins.source, Name: "datasetsource", Pkg: "./examples/datasetsource"})
}

const (
	token = "integration-token-0123456789"
	title = "Integration dataset"
	edits = 150 // × 20 quads per edit: 3,000 random additions and retractions
)

// sourceStatus is what examples/datasetsource reports at /status.
type sourceStatus struct {
	Patches   int    `json:"patches"`
	Edits     int    `json:"edits"`
	Published int    `json:"published"`
	Quads     int    `json:"quads"`
	LastError string `json:"lastError"`
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

type world struct {
	t              *testing.T
	hub, src, sub  *testproc.Proc
	hubURL, srcURL string
	dir            string
	subs           []*testproc.Proc
}

func (w *world) status() sourceStatus {
	w.t.Helper()
	var st sourceStatus
	if err := getJSON(w.srcURL+"/status", &st); err != nil {
		w.t.Fatalf("source status: %v", err)
	}
	return st
}

// applied returns the distinct patches the subscriber's runs applied.
func (w *world) applied() map[string]bool {
	out := map[string]bool{}
	for _, p := range w.subs {
		sc := bufio.NewScanner(strings.NewReader(p.Output(0)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e mirror.Event
			if line := sc.Text(); strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &e) == nil && e.Kind == dataset.EventPatch {
				out[e.Loc] = true
			}
		}
	}
	return out
}

func (w *world) waitApplied(n int, timeout time.Duration) {
	w.t.Helper()
	testproc.WaitFor(w.t, timeout, fmt.Sprintf("the subscriber applies %d patches", n), func() (bool, string) {
		got := len(w.applied())
		return got >= n, fmt.Sprintf("%d applied", got)
	})
}

func (w *world) waitPublished(n int, timeout time.Duration) sourceStatus {
	w.t.Helper()
	var st sourceStatus
	testproc.WaitFor(w.t, timeout, fmt.Sprintf("the Source publishes %d patches", n), func() (bool, string) {
		st = w.status()
		return st.Published >= n, fmt.Sprintf("%+v", st)
	})
	return st
}

func TestDataset_ImporterEndsWithTheSourceDataset(t *testing.T) {
	for _, transport := range []string{"websocket", "webhook", "nats"} {
		t.Run(transport, func(t *testing.T) { endToEnd(t, transport) })
	}
}

func endToEnd(t *testing.T, transport string) {
	w := &world{t: t}
	root := t.TempDir()
	w.dir = filepath.Join(root, "dataset")
	hubPort, natsPort, srcPort, cbPort := testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)
	// the hub's public URL is a validating proxy in front of it (as a hub
	// behind a reverse proxy): every answer to the Source and the
	// subscriber is checked against the contract
	w.hubURL = hubtest.LoadContract(t).Proxy(t, fmt.Sprintf("http://127.0.0.1:%d/", hubPort))
	w.srcURL = fmt.Sprintf("http://127.0.0.1:%d", srcPort)
	channels := filepath.Join(root, "channels.json")
	ch := fmt.Sprintf(`[{"topic": %q, "name": "dataset1", "trust": "token", "token": %q, "capabilityList": %q}]`,
		w.srcURL+"/dataset1/topic", token, w.srcURL+"/dataset1/capabilitylist.xml")
	if err := os.WriteFile(channels, []byte(ch), 0o644); err != nil {
		t.Fatal(err)
	}
	natsPW := filepath.Join(root, "nats-password") // the subscriber reads the log as the hub's read user
	if err := os.WriteFile(natsPW, []byte("reader-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.hub = testproc.Start(t, "hub", bins.hub, "--listen", fmt.Sprintf("127.0.0.1:%d", hubPort), "--hub-url", w.hubURL, "--data-dir", filepath.Join(root, "hubdata"),
		"--nats-listen", fmt.Sprintf("127.0.0.1:%d", natsPort), "--nats-password-file", natsPW, "--channels", channels, "--allow-networks", "127.0.0.0/8",
		"--retry", "100ms,x2,max=400ms,attempts=4,jitter=0.1", "--rotate-entries", "25", "--log-level", "warn", "--shutdown-timeout", "5s")
	testproc.WaitHTTP(t, w.hub, w.hubURL+"readyz", 30*time.Second)
	w.src = testproc.Start(t, "datasetsource", bins.source, "--dir", filepath.Join(root, "source"), "--listen", fmt.Sprintf("127.0.0.1:%d", srcPort),
		"--hub", w.hubURL, "--token", token, "--edits", fmt.Sprint(edits), "--quads", "20", "--interval", "40ms", "--seed", "15", "--title", title)
	testproc.WaitHTTP(t, w.src, w.srcURL+"/status", 30*time.Second)
	w.waitPublished(10, 60*time.Second)

	subArgs := []string{"--source", w.srcURL + "/", "--dataset", w.dir, "--transport", transport, "--listen", fmt.Sprintf("127.0.0.1:%d", cbPort),
		"--lease", "1h", "--resync", "0", "--json", "--log-level", "info", "--nats-url", fmt.Sprintf("nats://reader:reader-secret@127.0.0.1:%d", natsPort)}
	w.sub = testproc.Start(t, "subscriber", bins.subscriber, subArgs...)
	w.subs = append(w.subs, w.sub)
	w.waitApplied(25, 60*time.Second)

	// offline while the Source goes on
	w.sub.Stop(t)
	offlineFrom := w.status().Published
	w.waitPublished(offlineFrom+25, 60*time.Second)
	w.sub.Restart(t)
	w.waitApplied(offlineFrom+25, 60*time.Second)

	// the hub dies in the middle
	w.waitPublished(offlineFrom+40, 60*time.Second)
	w.hub.Kill()
	time.Sleep(700 * time.Millisecond)
	w.hub.Restart(t)
	testproc.WaitHTTP(t, w.hub, w.hubURL+"readyz", 30*time.Second)

	var final sourceStatus
	testproc.WaitFor(t, 120*time.Second, "the Source makes and publishes every edit", func() (bool, string) {
		final = w.status()
		return final.Edits >= edits && final.Published == final.Patches, fmt.Sprintf("%+v", final)
	})
	w.waitApplied(final.Patches, 90*time.Second)
	w.sub.Stop(t)

	var want, got dataset.Store
	resp, err := http.Get(w.srcURL + "/dataset1/dataset.nq")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := want.Load(resp.Body); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(w.dir, dataset.SnapshotFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := got.Load(f); err != nil {
		t.Fatal(err)
	}
	if want.Len() != final.Quads || want.Len() == 0 {
		t.Fatalf("the Source serves %d quads, its status says %d", want.Len(), final.Quads)
	}
	if same, err := dataset.Isomorphic(&want, &got); err != nil || !same {
		t.Fatalf("the subscriber's dataset (%d quads) differs from the Source's (%d quads) (%v):\n%s", got.Len(), want.Len(), err, firstDiff(&want, &got))
	}
	var st dataset.State
	raw, err := os.ReadFile(filepath.Join(w.dir, dataset.StateFile))
	if err != nil || json.Unmarshal(raw, &st) != nil {
		t.Fatalf("state file: %v", err)
	}
	if st.Title != title || st.Mode != dataset.ModeChangeList || st.Patches != final.Patches {
		t.Fatalf("state: title %q, mode %s, %d patches; want %q, changelist, %d", st.Title, st.Mode, st.Patches, title, final.Patches)
	}
	t.Logf("%s: %d patches, %d quads in step; %d random additions and retractions", transport, final.Patches, got.Len(), edits*20)
}

// firstDiff describes a few quads that only one side holds.
func firstDiff(a, b *dataset.Store) string {
	d := dataset.Diff(a, b)
	lines := strings.SplitN(d, "\n", 11)
	return strings.Join(lines[:min(len(lines), 10)], "\n")
}
