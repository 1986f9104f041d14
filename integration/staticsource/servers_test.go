// Package staticsource follows Sources deployed as static files behind real
// web servers (Debian's nginx with its default ETag and with `etag off`,
// `python3 -m http.server`) while a test writes their Change List Index,
// lists and resources into the directory they serve, in the very second
// the hub reads them: appends, same-size rewrites and rotations. Every
// change must be published once, in order, and a mirror end equal to the
// directory.
package staticsource

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

// staticServer is a real static-file server process serving a directory
// on a loopback port. Each request it logs is handed to onRequest (set
// before the server starts), from the goroutine reading its log.
type staticServer struct {
	name string
	base string // http://127.0.0.1:port
}

// requestLog is a request a server logged: its path and status.
type requestLog struct {
	path   string
	status int
}

// install runs scripts/deps.sh at most once per test binary, for a server
// that is missing; installErr is what it said when it failed. Test
// support, shared by the tests of the binary.
var install struct {
	once sync.Once
	err  error
}

// binary finds a server's program, installing it with scripts/deps.sh
// (as CI does) when it is missing; the test is skipped, saying why, only
// when it can be neither found nor installed.
func binary(t *testing.T, name string, dirs ...string) string {
	t.Helper()
	find := func() string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, d := range dirs {
			if p := filepath.Join(d, name); isExecutable(p) {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	install.once.Do(func() {
		cmd := exec.Command("bash", "../../scripts/deps.sh")
		cmd.Env = append(os.Environ(), "RSHUB_NO_BROWSER=1") // the servers only
		out, err := cmd.CombinedOutput()
		if err != nil {
			install.err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
		}
	})
	if p := find(); p != "" {
		return p
	}
	t.Skipf("%s is not installed and scripts/deps.sh could not install it (%v): install Debian's %s to run the static-file Source tests", name, install.err, name)
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// startNginx runs Debian's nginx as the test's user, in the foreground and
// as one process, with its own configuration, pid file, temporary paths
// and error log in a temporary directory, serving dir on a loopback port;
// etag false is `etag off`; extra goes into the server block.
func startNginx(t *testing.T, dir string, etag bool, onRequest func(requestLog), extra ...string) *staticServer {
	t.Helper()
	bin := binary(t, "nginx", "/usr/sbin", "/usr/local/sbin")
	tmp := t.TempDir()
	port := testenv.FreePort(t)
	onOff := map[bool]string{true: "on", false: "off"}[etag]
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 256; }
http {
  log_format req '$request_method $uri $status';
  access_log /dev/stderr req;
  client_body_temp_path %[1]s/client_body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  types { application/xml xml; text/plain txt; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:%[2]d;
    root %[3]s;
    etag %[4]s;
%[5]s
  }
}
`, tmp, port, dir, onOff, strings.Join(extra, "\n"))
	path := filepath.Join(tmp, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	name := "nginx (etag " + onOff + ")"
	nginxLine := regexp.MustCompile(`^GET (\S+) (\d{3})$`)
	run(t, name, port, filepath.Join(tmp, "error.log"), nginxLine, onRequest,
		bin, "-e", filepath.Join(tmp, "error.log"), "-p", tmp, "-c", path)
	return &staticServer{name: name, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
}

// startPython runs `python3 -m http.server` serving dir on a loopback port.
func startPython(t *testing.T, dir string, onRequest func(requestLog)) *staticServer {
	t.Helper()
	bin := binary(t, "python3")
	port := testenv.FreePort(t)
	pyLine := regexp.MustCompile(`"GET (\S+) HTTP/[0-9.]+" (\d{3})`)
	run(t, "python3 -m http.server", port, "", pyLine, onRequest,
		bin, "-u", "-m", "http.server", strconv.Itoa(port), "--bind", "127.0.0.1", "--directory", dir)
	return &staticServer{name: "python3 -m http.server", base: fmt.Sprintf("http://127.0.0.1:%d", port)}
}

// run starts a server process, reads its request log from stderr (lines
// matching line: path and status), waits until its port answers, and
// stops it when the test ends.
func run(t *testing.T, name string, port int, errorLog string, line *regexp.Regexp, onRequest func(requestLog), bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder // what was not a request, for a failure's message
	var outMu sync.Mutex
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := line.FindStringSubmatch(sc.Text()); m != nil {
				status, _ := strconv.Atoi(m[2])
				if onRequest != nil {
					onRequest(requestLog{path: m[1], status: status})
				}
				continue
			}
			outMu.Lock()
			if out.Len() < 8<<10 {
				out.WriteString(sc.Text() + "\n")
			}
			outMu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	exited := make(chan error, 1)
	go func() { <-read; exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			outMu.Lock()
			defer outMu.Unlock()
			logged := ""
			if errorLog != "" {
				b, _ := os.ReadFile(errorLog)
				logged = string(b)
			}
			t.Fatalf("%s exited before serving (%v):\n%s%s", name, err, out.String(), logged)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer on port %d within 30s", name, port)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
}
