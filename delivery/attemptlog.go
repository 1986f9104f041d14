package delivery

import (
	"io"
	"net/http"
	"time"

	"github.com/rshub/rshub/hub"
)

// AttemptRecorder takes a record of every delivery attempt for the
// subscription's attempt log; *hub.AttemptLog implements it. Record must
// not block: the engine calls it between attempts.
type AttemptRecorder interface {
	Record(a hub.Attempt)
}

// subRecorders is an AttemptRecorder that gives each subscription a
// recorder of its own, which records without looking the subscription up
// (*hub.AttemptLog: For); a queue keeps its own.
type subRecorders interface {
	For(subID string) *hub.SubAttempts
}

// recorderFor returns the recorder of subID's attempts in l: its own when
// l gives one (subRecorders), else l.
func recorderFor(l AttemptRecorder, subID string) AttemptRecorder {
	if r, ok := l.(subRecorders); ok {
		return r.For(subID)
	}
	return l
}

// responseDetail is what the attempt log keeps of a response other than
// 2xx: the headers hub.AttemptHeader keeps and its body's start.
type responseDetail struct {
	header map[string]string
	body   []byte
}

// readDetail reads the detail of resp, at most hub.AttemptBodyLen bytes of
// its body; the caller drains the rest.
func readDetail(resp *http.Response) *responseDetail {
	d := &responseDetail{}
	for name, vs := range resp.Header {
		if len(vs) > 0 && hub.AttemptHeader(name) {
			if d.header == nil {
				d.header = map[string]string{}
			}
			d.header[name] = vs[0]
		}
	}
	d.body, _ = io.ReadAll(io.LimitReader(resp.Body, hub.AttemptBodyLen))
	return d
}

// logAttempt hands the outcome of attempt n of the record seq, made at
// now in took, to the attempt log, with the next attempt's time, next,
// when more.
func (q *queue) logAttempt(seq uint64, n int, a attempt, took time.Duration, now time.Time, next time.Time, more bool) {
	if q.w.cfg.Attempts == nil {
		return
	}
	if q.attempts == nil {
		q.attempts = recorderFor(q.w.cfg.Attempts, q.id)
	}
	rec := hub.Attempt{SubID: q.id, Time: now.UTC(), Seq: seq, Attempt: n, Status: a.status, LatencyMS: ms(took)}
	if !a.ok() {
		rec.Error = a.reason()
	}
	if more {
		rec.NextRetry = next.UTC()
	}
	if a.detail != nil {
		rec.Headers, rec.Body = a.detail.header, string(a.detail.body)
	}
	q.attempts.Record(rec)
}
