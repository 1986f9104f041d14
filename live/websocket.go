package live

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/wire"
)

// ServeHTTP is the WebSocket endpoint (wire.PathWebSocket): it admits the
// request and upgrades the connection to a session written as WebSocket
// text messages.
func (ls *Sessions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, ok := ls.admit(w, r, false)
	if !ok {
		return
	}
	ls.pinLiveStart(r.Context(), &req)
	conn, err := ls.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the client
	}
	// the session outlives the request, whose context ends when ServeHTTP returns
	s := newSession(ls, context.WithoutCancel(r.Context()), &ls.count, req)
	c := &wsConn{conn: conn, timeout: ls.cfg.WriteTimeout, readerDone: make(chan struct{})}
	s.out = c
	if !ls.add(s) {
		_ = conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(wire.CloseGoingAway, "hub shutting down"), time.Now().Add(time.Second))
		_ = conn.Close()
		return
	}
	go c.read(s)
	go s.run()
}

// wsConn writes a session to a WebSocket connection: frames are text
// messages, keep-alives are pings, the end is a close frame.
type wsConn struct {
	conn       *websocket.Conn
	timeout    time.Duration // per write
	readerDone chan struct{} // closed when read returns
}

func (c *wsConn) frame(_ string, _ wire.Cursor, b []byte) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.timeout))
	return c.conn.WriteMessage(websocket.TextMessage, b)
}

func (c *wsConn) encoded(e *encodedFrame) error {
	pm := e.prepared()
	if pm == nil {
		return c.frame(e.kind, e.id, e.json)
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.timeout))
	return c.conn.WritePreparedMessage(pm)
}

func (c *wsConn) keepAlive() error {
	return c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.timeout))
}

// end sends the close frame when code is not 0, waits a while for the
// client's answer, and closes the connection.
func (c *wsConn) end(code int, reason string, _ uint64) {
	if code != 0 {
		msg := websocket.FormatCloseMessage(code, reason)
		deadline := time.Now().Add(c.timeout)
		if c.conn.WriteControl(websocket.CloseMessage, msg, deadline) == nil {
			t := time.NewTimer(time.Until(deadline))
			select { // the client answers with its close frame
			case <-c.readerDone:
			case <-t.C:
			}
			t.Stop()
		}
	}
	_ = c.conn.Close()
	<-c.readerDone
}
