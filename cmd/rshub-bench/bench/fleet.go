package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// fleetCmd is a command from the parent to the client fleet child, one
// JSON object per line on the child's stdin.
type fleetCmd struct {
	Op          string `json:"op"`             // connect, expect, wait, close
	Kind        string `json:"kind,omitempty"` // connect: "" for WebSocket, "sse" for Server-Sent Events
	URL         string `json:"url,omitempty"`
	N           int    `json:"n,omitempty"`
	Base        int    `json:"base,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
	LimitMs     int64  `json:"limitMs,omitempty"`
}

// fleetReply answers one fleetCmd, one JSON object per line on stdout.
type fleetReply struct {
	Err       string `json:"err,omitempty"`
	Connected int    `json:"connected,omitempty"`
	Closed    int    `json:"closed,omitempty"`
	Count     int    `json:"count,omitempty"`
	Want      int    `json:"want,omitempty"`
	Dups      int    `json:"dups,omitempty"`
	Stray     int    `json:"stray,omitempty"`
	Last      int64  `json:"last,omitempty"` // Unix nanoseconds of the last distinct receipt
	P50       int64  `json:"p50,omitempty"`  // nanoseconds
	P99       int64  `json:"p99,omitempty"`
	Max       int64  `json:"max,omitempty"`
}

// RunFleet is the WebSocket and Server-Sent Events client fleet child process: it reads commands
// from in and answers each on out until in ends or ctx does. The fleet
// runs in its own process so that the hub's memory per connection is the
// hub's alone and client work has its own scheduler.
func RunFleet(ctx context.Context, in io.Reader, out io.Writer, lg *slog.Logger) error {
	f := &fleet{lg: lg}
	defer f.closeAll()
	sc := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var c fleetCmd
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return fmt.Errorf("fleet: bad command: %w", err)
		}
		rep := f.do(ctx, c)
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("fleet: answer: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("fleet: read commands: %w", err)
	}
	return nil
}

// fleet holds the child's connections and the current measurement.
type fleet struct {
	lg      *slog.Logger
	conns   []*fleetConn
	current atomic.Pointer[receipts]
}

type fleetConn struct {
	c      *websocket.Conn    // a WebSocket, or nil for a stream
	cancel context.CancelFunc // ends a Server-Sent Events stream
	done   chan struct{}      // the reader ended
}

func (f *fleet) do(ctx context.Context, c fleetCmd) fleetReply {
	switch c.Op {
	case "connect":
		if c.Kind == kindSSE {
			n, err := f.connectSSE(ctx, c.URL, c.N, max(c.Concurrency, 1))
			return fleetReply{Connected: n, Err: errString(err)}
		}
		n, err := f.connect(ctx, c.URL, c.N, max(c.Concurrency, 1))
		return fleetReply{Connected: n, Err: errString(err)}
	case "expect":
		f.current.Store(newReceipts(len(f.conns), c.Base, c.N))
		return fleetReply{}
	case "wait":
		rc := f.current.Load()
		if rc == nil {
			return fleetReply{Err: "wait without expect"}
		}
		err := rc.wait(ctx, time.Duration(c.LimitMs)*time.Millisecond)
		f.current.Store(nil)
		t := rc.tally()
		r := fleetReply{Err: errString(err), Count: t.Count, Want: t.Want, Dups: t.Dups, Stray: t.Stray,
			P50: int64(t.Latency.P50), P99: int64(t.Latency.P99), Max: int64(t.Latency.Max)}
		if !t.Last.IsZero() {
			r.Last = t.Last.UnixNano()
		}
		return r
	case "close":
		return fleetReply{Closed: f.closeAll()}
	}
	return fleetReply{Err: fmt.Sprintf("unknown op %q", c.Op)}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// connect opens n connections to url, spreading their source addresses
// over 127.0.0.1-127.0.0.4 to widen the pool of ephemeral ports.
func (f *fleet) connect(ctx context.Context, url string, n, concurrency int) (int, error) {
	conns := make([]*fleetConn, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := atomic.Int64{}
	for range min(concurrency, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fc, err := dialFleetConn(ctx, url, i)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("client %d: %w", i, err)
					}
					mu.Unlock()
					next.Store(int64(n)) // stop dialling
					return
				}
				conns[i] = fc
			}
		}()
	}
	wg.Wait()
	for _, fc := range conns {
		if fc == nil {
			continue
		}
		f.conns = append(f.conns, fc)
		go f.read(len(f.conns)-1, fc)
	}
	return len(f.conns), firstErr
}

func dialFleetConn(ctx context.Context, url string, i int) (*fleetConn, error) {
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%4))}
	d := websocket.Dialer{
		NetDialContext:   (&net.Dialer{LocalAddr: local, Timeout: 10 * time.Second}).DialContext,
		HandshakeTimeout: 10 * time.Second,
		ReadBufferSize:   1024,
		WriteBufferSize:  256,
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, resp, err := d.DialContext(dctx, url, nil)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial %s: %w (status %d)", url, err, resp.StatusCode)
		}
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	return &fleetConn{c: c, done: make(chan struct{})}, nil
}

// notificationType marks a notification frame (the hub's and the raw
// broadcast server's alike).
const notificationType = `"type":"notification"`

// read records every notification frame of connection i until the
// connection ends.
func (f *fleet) read(i int, fc *fleetConn) {
	defer close(fc.done)
	for {
		_, msg, err := fc.c.ReadMessage()
		if err != nil {
			return
		}
		now := time.Now()
		if !bytes.Contains(msg, []byte(notificationType)) {
			continue
		}
		id, sent, ok := parseMark(msg)
		if rc := f.current.Load(); rc != nil && ok {
			rc.record(i, id, sent, now)
		}
	}
}

// closeAll closes every connection with a close handshake (bounded to a
// few seconds each, 256 at a time) and returns how many there were.
func (f *fleet) closeAll() int {
	conns := f.conns
	f.conns = nil
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	for _, fc := range conns {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if fc.c == nil {
				fc.cancel()
				<-fc.done
				return
			}
			msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bench done")
			_ = fc.c.WriteControl(websocket.CloseMessage, msg, time.Now().Add(2*time.Second))
			select {
			case <-fc.done:
			case <-time.After(3 * time.Second):
			}
			_ = fc.c.Close()
		}()
	}
	wg.Wait()
	return len(conns)
}
