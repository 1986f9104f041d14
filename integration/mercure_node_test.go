package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/rshub/rshub/internal/npmtest"
	"github.com/rshub/rshub/internal/testenv"
)

// nodeEventSource is the npm eventsource package (a WHATWG EventSource
// for Node.js), the version the test installs.
const nodeEventSource = "eventsource@4.1.1"

// nodeSubscriberJS subscribes to the URL given as its argument with the
// package's EventSource and prints each opening, error and update as a
// JSON line.
const nodeSubscriberJS = `
const { EventSource } = require("eventsource");
const es = new EventSource(process.argv[1]);
const say = (v) => process.stdout.write(JSON.stringify(v) + "\n");
es.onopen = () => say({open: true});
es.onerror = () => say({error: true});
es.onmessage = (e) => say({id: e.lastEventId, data: e.data});
`

// nodeSubscriber is a Node.js process subscribed with nodeSubscriberJS.
type nodeSubscriber struct {
	mu     sync.Mutex
	opens  int
	errors int
	events []mercureEvent
}

func (n *nodeSubscriber) state() (int, int, []mercureEvent) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.opens, n.errors, append([]mercureEvent(nil), n.events...)
}

// subscribeInNode starts the Node.js subscriber on the hub's Mercure URL
// with a match per topic; it ends with the test.
func subscribeInNode(t *testing.T, hubURL string, topics []string) mercureSubscriber {
	t.Helper()
	node := npmtest.Tool(t, "node")
	modules := npmtest.Install(t, "rshub-eventsource", nil, nodeEventSource)
	u, err := url.Parse(hubURL + ".well-known/mercure")
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = url.Values{"match": topics}.Encode()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, "-e", nodeSubscriberJS, u.String())
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	stderr := &testenv.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &nodeSubscriber{}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		for sc.Scan() {
			var line struct {
				Open, Error bool
				ID, Data    string
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Errorf("the Node.js subscriber printed %q: %v", sc.Text(), err)
				continue
			}
			n.mu.Lock()
			switch {
			case line.Open:
				n.opens++
			case line.Error:
				n.errors++
			default:
				n.events = append(n.events, mercureEvent{ID: line.ID, Data: line.Data})
			}
			n.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-read
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the Node.js subscriber's stderr:\n%s", stderr.String())
		}
	})
	return n
}

// TestMercure_NodeEventSourceGetsEveryUpdateOnceAcrossHubSIGKILL runs
// mercureAcrossRestart with the npm eventsource package in Node.js.
func TestMercure_NodeEventSourceGetsEveryUpdateOnceAcrossHubSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a hub process and Node.js")
	}
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	mercureAcrossRestart(t, subscribeInNode)
}
