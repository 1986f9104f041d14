package destination

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
)

// bins holds the binaries built once by TestMain.
var bins struct{ hub, subscriber, dirsource string }

func TestMain(m *testing.M) {
	testproc.Main(m, testproc.Binary{Out: &bins.hub, Name: "hub", Pkg: "./cmd/hub"},
		testproc.Binary{Out: &bins.subscriber, Name: "subscriber", Pkg: "./cmd/subscriber"},
		testproc.Binary{Out: &bins.dirsource, Name: "dirsource", Pkg: "./examples/dirsource"})
}

// proc is a running binary whose output is kept for failure reports.
type proc = testproc.Proc

// start runs bin with args; it is killed when the test ends.
func start(t *testing.T, name, bin string, args ...string) *proc {
	return testproc.Start(t, name, bin, args...)
}

func freePort(t *testing.T) int { return testenv.FreePort(t) }

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	testproc.WaitFor(t, timeout, what, cond)
}

// waitHTTP waits until url answers 200, or p exits.
func waitHTTP(t *testing.T, p *proc, url string) {
	t.Helper()
	testproc.WaitHTTP(t, p, url, 30*time.Second)
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
