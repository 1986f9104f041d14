// Package walkthrough_test runs the README's five-minute walkthrough as it
// is written: every shell block marked with a <!-- walk: … --> comment, in
// order, so the walkthrough cannot rot.
//
// A marker says how to run the block after it:
//
//	bg name=N wait="re"   start it in the background; go on once its output matches re
//	expect="re"           run it to the end; it must succeed and its output match re
//	retry expect="re"     the same, run again (for at most a minute) until it matches
//	then name=N wait="re" run it to the end, then wait for re in the output of N
//	browser name=N wait="re"  a js block: run it in headless Chromium in a page of
//	                      the hub's origin, once its EventSources are open go on
//	                      when its console output matches re (as bg)
//
// The test builds the commands once and runs the built binaries for
// `go run ./cmd/…`, moves every fixed port to a free one, and every path
// under /tmp/rshub-walk to a directory of its own.
package walkthrough_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testproc"
)

// step is one marked block of the README.
type step struct {
	line    int // of the marker, for messages
	bg      bool
	browser bool
	retry   bool
	name    string
	wait    *regexp.Regexp // bg: in its own output; then: in name's output
	expect  *regexp.Regexp
	command string
}

var (
	markerRE = regexp.MustCompile(`^<!-- walk: (.*) -->$`)
	attrRE   = regexp.MustCompile(`(\w+)(?:=("(?:[^"\\]|\\.)*"|\S+))?`)
)

// parseSteps reads the marked blocks of a README.
func parseSteps(t *testing.T, readme string) []step {
	t.Helper()
	lines := strings.Split(readme, "\n")
	var steps []step
	for i := 0; i < len(lines); i++ {
		m := markerRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		s := step{line: i + 1}
		for _, a := range attrRE.FindAllStringSubmatch(m[1], -1) {
			val := a[2]
			if strings.HasPrefix(val, `"`) {
				u, err := strconv.Unquote(val)
				if err != nil {
					t.Fatalf("README line %d: %s: %v", i+1, a[0], err)
				}
				val = u
			}
			switch a[1] {
			case "bg":
				s.bg = true
			case "retry":
				s.retry = true
			case "browser":
				s.browser = true
			case "then":
			case "name":
				s.name = val
			case "wait":
				s.wait = regexp.MustCompile(val)
			case "expect":
				s.expect = regexp.MustCompile(val)
			default:
				t.Fatalf("README line %d: unknown walk attribute %q", i+1, a[1])
			}
		}
		block := "```sh"
		if s.browser {
			block = "```js"
		}
		if i+1 >= len(lines) || lines[i+1] != block {
			t.Fatalf("README line %d: this walk marker must be followed by a %s block", i+1, strings.TrimPrefix(block, "```"))
		}
		var body []string
		for i += 2; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		s.command = strings.Join(body, "\n")
		steps = append(steps, s)
	}
	return steps
}

// output collects a background process's output.
type output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// freePort returns a loopback port free now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// waitFor waits, at most d, for re to match what out holds.
func waitFor(t *testing.T, what string, out *output, re *regexp.Regexp, d time.Duration, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !re.MatchString(out.String()) {
		select {
		case <-exited:
			if !re.MatchString(out.String()) {
				t.Fatalf("%s exited before printing %q:\n%s", what, re, out)
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %q within %v:\n%s", what, re, d, out)
		}
		time.Sleep(100 * time.Millisecond) // polling the output, bounded by the deadline
	}
}

// hostOf is the host:port of a URL.
func hostOf(u string) string {
	return strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/")
}

func TestWalkthrough_READMECommandsWorkAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the walkthrough's processes")
	}
	for _, bin := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed", bin)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := parseSteps(t, string(raw))
	if len(steps) < 10 {
		t.Fatalf("the README has %d walkthrough steps; the walkthrough lost its markers", len(steps))
	}

	bin := t.TempDir()
	for _, cmd := range []string{"cmd/hub", "cmd/subscriber", "examples/dirsource", "examples/datasetsource"} {
		if _, err := testproc.Build(bin, filepath.Base(cmd), "./"+cmd); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	hubAddr, dirAddr, dsAddr := "127.0.0.1:"+freePort(t), "127.0.0.1:"+freePort(t), "127.0.0.1:"+freePort(t)
	privateAddr := "127.0.0.1:" + freePort(t) // the private channels' hub
	// each hub's public URL (--hub-url), where the README's requests go, is
	// a validating proxy in front of it: every answer is checked against
	// the contract
	contract := hubtest.LoadContract(t)
	hubURL, privateURL := contract.Proxy(t, "http://"+hubAddr+"/"), contract.Proxy(t, "http://"+privateAddr+"/")
	// each server is told its moved address first, so that a --listen the
	// README gives would still win
	rewrite := strings.NewReplacer(
		"go run ./cmd/hub", filepath.Join(bin, "hub")+" --listen "+hubAddr+" --hub-url "+hubURL,
		"--listen 127.0.0.1:8082", "--listen "+privateAddr+" --hub-url "+privateURL,
		"go run ./cmd/subscriber", filepath.Join(bin, "subscriber"),
		"go run ./examples/dirsource", filepath.Join(bin, "dirsource")+" --listen "+dirAddr,
		"go run ./examples/datasetsource", filepath.Join(bin, "datasetsource")+" --listen "+dsAddr,
		"127.0.0.1:8080", hostOf(hubURL),
		"127.0.0.1:8070", dirAddr,
		"127.0.0.1:8071", dsAddr,
		"127.0.0.1:8082", hostOf(privateURL),
		"/tmp/rshub-walk", work,
	)
	env := append(os.Environ(),
		"RSHUB_NATS_LISTEN=127.0.0.1:"+freePort(t), // the hub's default 4222 may be taken
		"RSHUB_SUBSCRIBER_LISTEN=127.0.0.1:"+freePort(t),
	)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bgs := map[string]*output{}
	exited := map[string]chan struct{}{}
	for _, s := range steps {
		command := rewrite.Replace(s.command)
		where := fmt.Sprintf("README line %d (%s)", s.line, strings.SplitN(s.command, "\n", 2)[0])
		shell := func() *exec.Cmd {
			cmd := exec.CommandContext(ctx, "bash", "-e", "-c", command)
			cmd.Dir, cmd.Env = root, env
			return cmd
		}
		if s.browser {
			out := &output{}
			startBrowserStep(t, where, hubAddr, command, out)
			bgs[s.name], exited[s.name] = out, make(chan struct{})
			waitFor(t, where, out, s.wait, time.Minute, exited[s.name])
			continue
		}
		if s.bg {
			cmd := shell()
			out := &output{}
			cmd.Stdout, cmd.Stderr = out, out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the shell and what it starts
			if err := cmd.Start(); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			t.Cleanup(func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					<-done
				}
			})
			bgs[s.name], exited[s.name] = out, done
			waitFor(t, where, out, s.wait, time.Minute, done)
			continue
		}
		deadline := time.Now().Add(time.Minute)
		for {
			out, err := shell().CombinedOutput()
			ok := err == nil && (s.expect == nil || s.expect.Match(out))
			if ok {
				break
			}
			if !s.retry || time.Now().After(deadline) {
				t.Fatalf("%s: %v, output:\n%s\nwant it to succeed and match %q", where, err, out, s.expect)
			}
			time.Sleep(time.Second) // the step documents a retry; bounded by the deadline
		}
		if s.wait != nil {
			out, ok := bgs[s.name]
			if !ok {
				t.Fatalf("%s waits on %q, which no earlier step started", where, s.name)
			}
			waitFor(t, where+" then "+s.name, out, s.wait, time.Minute, exited[s.name])
		}
	}
}
