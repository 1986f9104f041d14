package live

import (
	"encoding/json"
	"io"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/wire"
)

// Close reasons of a session whose client sent what the protocol does not
// allow; the %d is the resume cursor. Each stays well within the 123 bytes a
// close frame's reason may have.
const (
	reasonBinary  = "binary messages are not accepted; resume with since=%d"
	reasonNotJSON = "text message is not JSON; clients send only control frames; resume with since=%d"
	reasonUnknown = "unknown message: clients send only control frames; resume with since=%d"
	reasonTooBig  = "message over 512 bytes; resume with since=%d"
)

// read consumes what the client sends and ends the session when the
// connection fails or the client is silent (no pong) for two ping
// intervals. Clients send only control frames (pings, pongs, close); a data
// message closes the session with 1003 (binary, or text that is not JSON),
// 1008 (JSON: the protocol defines no client message) or 1009 (over
// wire.MaxClientMessage bytes), with a reason, and is counted in ProtocolClosed.
//
// The size limit is enforced here rather than with gorilla's SetReadLimit,
// whose close frame carries no reason. Gorilla reads a message's payload
// only as it is consumed, so an oversized one costs no memory: the reader
// keeps discarding what the client sends until its close frame answers the
// hub's, so the close frame is not lost to a reset connection.
func (wc *wsConn) read(s *session) {
	defer close(wc.readerDone)
	c := wc.conn
	wait := 2 * s.ls.cfg.PingInterval
	_ = c.SetReadDeadline(time.Now().Add(wait))
	c.SetPongHandler(func(string) error { return c.SetReadDeadline(time.Now().Add(wait)) })
	rejected := false
	for {
		mt, r, err := c.NextReader()
		if err != nil {
			s.close(0, "")
			return
		}
		if rejected {
			_, _ = io.Copy(io.Discard, r)
			continue
		}
		code, reason, err := judge(mt, r)
		if err != nil { // the connection failed within the message
			s.close(0, "")
			return
		}
		rejected = true
		s.ls.rejected.Add(1)
		s.ls.cfg.Logger.Info("websocket: client sent a message the protocol does not allow; closing",
			"remote", c.RemoteAddr().String(), "code", code)
		s.close(code, reason)
		// until the client answers the close frame, within the write timeout
		_ = c.SetReadDeadline(time.Now().Add(s.ls.cfg.WriteTimeout))
		c.SetPongHandler(func(string) error { return nil })
		_, _ = io.Copy(io.Discard, r)
	}
}

// judge returns the close code and reason for a data message of type mt
// whose payload r yields, reading at most wire.MaxClientMessage+1 bytes of it; an
// error when the connection failed first.
func judge(mt int, r io.Reader) (int, string, error) {
	if mt != websocket.TextMessage {
		return wire.CloseUnsupportedData, reasonBinary, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, wire.MaxClientMessage+1))
	switch {
	case len(b) > wire.MaxClientMessage:
		return wire.CloseMessageTooBig, reasonTooBig, nil
	case err != nil:
		return 0, "", err
	case !json.Valid(b):
		return wire.CloseUnsupportedData, reasonNotJSON, nil
	default:
		return wire.ClosePolicyViolation, reasonUnknown, nil
	}
}
