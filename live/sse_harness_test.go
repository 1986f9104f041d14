package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/wire"
)

// sseEvent is one event of a Server-Sent Events session with its data
// decoded.
type sseEvent struct {
	wire.Event
	msg wsMsg    // notification, gap, live
	end wire.End // end
}

// sseClient reads a Server-Sent Events session in a goroutine once
// started.
type sseClient struct {
	t      *testing.T
	resp   *http.Response
	cancel context.CancelFunc
	events chan sseEvent
	err    error // why the stream ended, once events is closed
}

// openEvents opens a session at base (the env's server when "") with
// query and header; rcvBuf > 0 shrinks the client's socket receive buffer.
func (e *wsEnv) openEvents(base, query string, hdr http.Header, rcvBuf int) (*sseClient, error) {
	if base == "" {
		base = e.srv.URL
	}
	client := e.srv.Client()
	if rcvBuf > 0 {
		client = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetReadBuffer(rcvBuf)
				}
				return c, err
			},
			ReadBufferSize: 1024,
		}}
	}
	ctx, cancel := context.WithCancel(e.ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+wire.PathEvents+"?"+query, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	c := &sseClient{t: e.t.(*testing.T), resp: resp, cancel: cancel}
	e.t.Cleanup(c.close)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return c, fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return c, nil
}

func (e *wsEnv) mustOpenEvents(query string, hdr http.Header) *sseClient {
	e.t.Helper()
	c, err := e.openEvents("", query, hdr, 0)
	if err != nil {
		e.t.Fatalf("open events %s: %v", query, err)
	}
	return c
}

func (c *sseClient) close() {
	c.cancel()
	_ = c.resp.Body.Close()
}

// start begins reading the stream.
func (c *sseClient) start() {
	if c.events != nil {
		return
	}
	c.events = make(chan sseEvent, 1024)
	go func() {
		defer close(c.events)
		r := wire.NewEventReader(c.resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				c.err = err
				return
			}
			se := sseEvent{Event: ev}
			dst := any(&se.msg)
			if ev.Type == wire.EventEnd {
				dst = &se.end
			}
			if err := json.Unmarshal([]byte(ev.Data), dst); err != nil {
				c.err = fmt.Errorf("event %q: %w", ev.Data, err)
				return
			}
			c.events <- se
		}
	}()
}

// nextErr returns the next event; io.EOF when the stream ended.
func (c *sseClient) nextErr() (sseEvent, error) {
	c.start()
	t := time.NewTimer(wsTimeout)
	defer t.Stop()
	select {
	case ev, ok := <-c.events:
		if !ok {
			if c.err == nil || errors.Is(c.err, io.EOF) {
				return ev, io.EOF
			}
			return ev, c.err
		}
		return ev, nil
	case <-t.C:
		return sseEvent{}, errors.New("no event within the timeout")
	}
}

func (c *sseClient) next() sseEvent {
	c.t.Helper()
	ev, err := c.nextErr()
	if err != nil {
		c.t.Fatalf("next event: %v", err)
	}
	return ev
}

// until reads events until a notification with seq >= last.
func (c *sseClient) until(last uint64) []sseEvent {
	c.t.Helper()
	var out []sseEvent
	for {
		ev := c.next()
		out = append(out, ev)
		if ev.Type == wire.EventNotification && ev.msg.Seq >= last {
			return out
		}
	}
}

// rest reads events until the stream ends.
func (c *sseClient) rest() []sseEvent {
	c.t.Helper()
	var out []sseEvent
	for {
		ev, err := c.nextErr()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			c.t.Fatalf("reading to the end: %v", err)
		}
		out = append(out, ev)
	}
}

// eventSeqs returns the sequences of the notification events.
func eventSeqs(evs []sseEvent) []uint64 {
	var out []uint64
	for _, ev := range evs {
		if ev.Type == wire.EventNotification {
			out = append(out, ev.msg.Seq)
		}
	}
	return out
}
