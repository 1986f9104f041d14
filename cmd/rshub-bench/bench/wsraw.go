package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// rawBroadcast is the WebSocket ceiling: a minimal hub-less gorilla server
// that writes the same JSON frame to every connection. Like the hub, it
// has a reader and a writer goroutine per connection, a bounded send queue,
// the same buffer sizes and a frame prepared once per broadcast.
type rawBroadcast struct {
	srv      *http.Server
	url      string
	upgrader websocket.Upgrader
	dropped  atomic.Int64 // frames not queued because a send queue was full

	mu    sync.Mutex
	conns map[*rawConn]struct{}
}

type rawConn struct {
	c    *websocket.Conn
	send chan *websocket.PreparedMessage
	done chan struct{}
}

func startRawBroadcast() (*rawBroadcast, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("raw broadcast server: %w", err)
	}
	b := &rawBroadcast{conns: map[*rawConn]struct{}{}, url: "ws://" + ln.Addr().String() + "/ws"}
	b.upgrader = websocket.Upgrader{ReadBufferSize: 256, WriteBufferSize: 4096, WriteBufferPool: &sync.Pool{}}
	b.srv = &http.Server{Handler: http.HandlerFunc(b.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

func (b *rawBroadcast) serve(w http.ResponseWriter, r *http.Request) {
	c, err := b.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	rc := &rawConn{c: c, send: make(chan *websocket.PreparedMessage, 256), done: make(chan struct{})}
	b.mu.Lock()
	b.conns[rc] = struct{}{}
	b.mu.Unlock()
	go b.write(rc)
	go b.read(rc)
}

// read consumes control frames until the connection ends.
func (b *rawBroadcast) read(rc *rawConn) {
	defer func() {
		b.mu.Lock()
		delete(b.conns, rc)
		b.mu.Unlock()
		close(rc.done)
	}()
	rc.c.SetReadLimit(512)
	for {
		if _, _, err := rc.c.NextReader(); err != nil {
			return
		}
	}
}

func (b *rawBroadcast) write(rc *rawConn) {
	defer rc.c.Close()
	for {
		select {
		case pm := <-rc.send:
			_ = rc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := rc.c.WritePreparedMessage(pm); err != nil {
				return
			}
		case <-rc.done:
			return
		}
	}
}

// count returns the open connections.
func (b *rawBroadcast) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}

// broadcast queues frame for every connection.
func (b *rawBroadcast) broadcast(frame []byte) error {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, frame)
	if err != nil {
		return fmt.Errorf("raw broadcast: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for rc := range b.conns {
		select {
		case rc.send <- pm:
		default:
			b.dropped.Add(1)
		}
	}
	return nil
}

func (b *rawBroadcast) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.srv.Shutdown(ctx)
	b.mu.Lock()
	for rc := range b.conns {
		_ = rc.c.Close()
	}
	b.mu.Unlock()
}

// rawFrame is the JSON frame the ceiling broadcasts: the shape and fields
// of the hub's notification frame (package wire) for the same
// notification, so both write frames of about the same size.
func rawFrame(id int, seq uint64, sent, from time.Time, topic string) ([]byte, error) {
	type entry struct {
		Loc      string `json:"loc"`
		Change   string `json:"change"`
		DateTime string `json:"datetime"`
		Hash     string `json:"hash"`
		Length   int64  `json:"length"`
		Type     string `json:"type"`
	}
	type frame struct {
		Type        string  `json:"type"`
		Channel     string  `json:"channel"`
		Topic       string  `json:"topic"`
		Seq         uint64  `json:"seq"`
		From        string  `json:"from"`
		Until       string  `json:"until"`
		ContentType string  `json:"content_type"`
		Received    string  `json:"received"`
		Entries     []entry `json:"entries"`
	}
	f := frame{Type: "notification", Channel: demoChannel, Topic: topic, Seq: seq,
		From: from.UTC().Format(time.RFC3339), Until: from.Add(time.Second).UTC().Format(time.RFC3339),
		ContentType: "application/xml", Received: sent.UTC().Format(time.RFC3339Nano)}
	for e := range entriesPerNotification {
		f.Entries = append(f.Entries, entry{
			Loc:      fmt.Sprintf("http://example.org%s%d/%d/%d", markPrefix, id, sent.UnixNano(), e),
			Change:   "updated",
			DateTime: from.Add(time.Duration(e+1) * time.Second / (entriesPerNotification + 1)).UTC().Format(time.RFC3339Nano),
			Hash:     "md5:1584abdf8ebdc9802ac0c6a7402c03b6", Length: 8876, Type: "text/html",
		})
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("raw frame: %w", err)
	}
	return b, nil
}
