package wire

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// PathEvents is the path of the hub's Server-Sent Events endpoint.
const PathEvents = "/events"

// ContentTypeEventStream is the media type of a Server-Sent Events
// response.
const ContentTypeEventStream = "text/event-stream"

// HeaderLastEventID is the request header a browser's EventSource sends
// when it reconnects: the id of the last event it received, a Cursor. The
// hub reads it as since, before the query's since and since_time.
const HeaderLastEventID = "Last-Event-ID"

// Event types of a Server-Sent Events session: the "event:" field of each
// event. The data of a notification, gap, live or reset event is the
// WebSocket frame of the same type; the data of an end event is an End.
const (
	EventNotification = FrameNotification
	EventGap          = FrameGap
	EventLive         = FrameLive
	EventReset        = FrameReset
	EventEnd          = "end"
)

// EventsRetry is the reconnection delay the hub asks of an EventSource with
// the "retry:" field at the start of each session.
const EventsRetry = 2 * time.Second

// EventsKeepAlive is the comment line the hub sends to keep an idle
// Server-Sent Events response open, every ping interval.
const EventsKeepAlive = ": keep-alive"

// End is the data of the last event of a Server-Sent Events session the hub
// ends: Code and Reason are those of the WebSocket close frame in the same
// case (CloseSlowConsumer, CloseGoingAway, CloseInternalError) and Since is
// the cursor to resume from, the sequence of the last event with an id.
type End struct {
	Type   string `json:"type"` // EventEnd
	Code   int    `json:"code"`
	Reason string `json:"reason"`
	Since  uint64 `json:"since"`
}

// EndFrame returns the JSON of an End.
func EndFrame(code int, reason string, since uint64) []byte {
	b, _ := json.Marshal(End{Type: EventEnd, Code: code, Reason: reason, Since: since}) // cannot fail
	return b
}

// EventsURL returns the URL of session s as Server-Sent Events on the hub
// at hubURL: PathEvents at the hub's origin.
func EventsURL(hubURL string, s Session) (string, error) {
	u, err := url.Parse(hubURL)
	if err != nil {
		return "", fmt.Errorf("hub URL: %w", err)
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = PathEvents, "", s.Query().Encode(), ""
	return u.String(), nil
}

// Event is one Server-Sent Event as a client reads it. ID is the value of
// the event's id field, HasID whether it had one.
type Event struct {
	Type  string // "message" when the event names none
	ID    string
	HasID bool
	Data  string
	Retry time.Duration // from a retry field in the event's block, else 0
}

// EventReader reads Server-Sent Events (the HTML event stream format):
// comments are skipped, data lines joined with "\n", and a block with no
// data is not an event (its retry field, if any, is reported with the next
// event).
type EventReader struct {
	r     *bufio.Reader
	retry time.Duration
}

// NewEventReader returns an EventReader reading r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{r: bufio.NewReader(r)}
}

// Next returns the next event, or the error that ended the stream (io.EOF
// when it ended cleanly between events).
func (er *EventReader) Next() (Event, error) {
	var ev Event
	var data []string
	hasData := false
	for {
		line, err := er.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && !hasData {
				return Event{}, io.EOF
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return Event{}, fmt.Errorf("event stream: %w", err)
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if !hasData {
				ev = Event{ID: ev.ID, HasID: ev.HasID}
				continue
			}
			ev.Type = cmp.Or(ev.Type, "message")
			ev.Data = strings.Join(data, "\n")
			ev.Retry, er.retry = er.retry, 0
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Type = value
		case "data":
			data, hasData = append(data, value), true
		case "id":
			ev.ID, ev.HasID = value, true
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil {
				er.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}
