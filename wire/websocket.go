package wire

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// PathWebSocket is the path of the hub's WebSocket endpoint.
const PathWebSocket = "/ws"

// Query parameters of a WebSocket session (GET /ws?...). Each is given at
// most once.
const (
	ParamChannels  = "channels"   // comma-separated channel names, or "*"
	ParamSince     = "since"      // deliver records with seq > since: a Cursor, "<epoch>-<seq>" or "<seq>"
	ParamSinceTime = "since_time" // deliver records whose until is after it, RFC 3339
	ParamRaw       = "raw"        // "1" adds the stored body to notification frames
	// ParamSessionCoalesce, "1" with one channel and since or since_time, replays
	// the backlog as coalesced notifications: one per run of consecutive
	// change notifications, with the net change per resource, its seq the
	// run's last sequence (so since= resumes losslessly), then goes live
	// one by one.
	ParamSessionCoalesce = "coalesce"
	ParamToken           = "token" // the hub's WebSocket token, if one is configured
)

// AllChannels is the value of ParamChannels that selects every channel.
const AllChannels = "*"

// MaxSessionChannels is the most channel names a session may list.
const MaxSessionChannels = 64

// MaxClientMessage is the most bytes of a client message the hub reads:
// clients send nothing but control frames.
const MaxClientMessage = 512

// Close codes of a WebSocket session. The reason of each names the cursor
// to resume from: "...; resume with since=<N>".
const (
	CloseGoingAway       = 1001 // the hub is shutting down
	CloseUnsupportedData = 1003 // the client sent a binary message or text that is not JSON
	ClosePolicyViolation = 1008 // the client sent a JSON message: the protocol defines none
	CloseMessageTooBig   = 1009 // the client sent a message over MaxClientMessage bytes
	CloseInternalError   = 1011 // replay failed for a reason other than the log being unavailable
	CloseSlowConsumer    = 4008 // the session's send queue filled up
	CloseTokenExpired    = 4401 // the token that admitted the session to a private channel expired
)

// Session says where a WebSocket session starts and what it carries; its
// Query is the query string of /ws.
type Session struct {
	Channels  []string  // channel names; empty means every channel ("*")
	Since     uint64    // with HasSince: deliver records with seq > Since
	HasSince  bool      //
	Epoch     string    // with HasSince, when known: the epoch of the log Since is a position of
	SinceTime time.Time // without HasSince, when not zero: records whose until is after it
	Raw       bool      // add the stored body to notification frames
	Coalesce  bool      // with one channel and a cursor: replay the backlog coalesced
	Token     string    // sent as ParamToken when not empty
}

// Query returns the session's query parameters. With neither HasSince nor
// SinceTime the session starts at the log's end: live only.
func (s Session) Query() url.Values {
	q := url.Values{}
	if len(s.Channels) == 0 {
		q.Set(ParamChannels, AllChannels)
	} else {
		q.Set(ParamChannels, strings.Join(s.Channels, ","))
	}
	switch {
	case s.HasSince:
		q.Set(ParamSince, Cursor{Epoch: s.Epoch, Seq: s.Since}.String())
	case !s.SinceTime.IsZero():
		q.Set(ParamSinceTime, s.SinceTime.UTC().Format(time.RFC3339Nano))
	}
	if s.Raw {
		q.Set(ParamRaw, "1")
	}
	if s.Coalesce {
		q.Set(ParamSessionCoalesce, "1")
	}
	if s.Token != "" {
		q.Set(ParamToken, s.Token)
	}
	return q
}

// WebSocketURL returns the URL of session s on the hub at hubURL: the
// ws (or, for https, wss) URL of PathWebSocket at the hub's origin.
func WebSocketURL(hubURL string, s Session) (string, error) {
	u, err := url.Parse(hubURL)
	if err != nil {
		return "", fmt.Errorf("hub URL: %w", err)
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = PathWebSocket, "", s.Query().Encode(), ""
	return u.String(), nil
}
