package delivery

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/wire"
)

type requesterKey struct{}

// A requester's context carries its parent's values but not its
// cancellation, is reused from POST to POST, and one whose timeout fired
// is replaced for the next POST, whose timer starts afresh.
func TestRequester_ReusesItsContextUntilATimeoutFires(t *testing.T) {
	t.Parallel()
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), requesterKey{}, "engine"))
	var r requester
	defer r.close()
	first, _ := r.begin(parent, time.Minute)
	if first.Value(requesterKey{}) != "engine" {
		t.Fatal("the POST's context lost its parent's values")
	}
	cancelParent()
	if first.Err() != nil {
		t.Fatal("the parent's cancellation reached the POST")
	}
	if _, active := r.inFlight(); !active {
		t.Fatal("no POST in flight after begin")
	}
	r.end()
	if _, active := r.inFlight(); active {
		t.Fatal("a POST in flight after end")
	}
	again, _ := r.begin(parent, 30*time.Millisecond)
	if again != first {
		t.Fatal("the next POST did not reuse the context")
	}
	select {
	case <-again.Done():
	case <-time.After(wait):
		t.Fatal("the POST's timeout did not cancel its context")
	}
	if again.Err() != context.Canceled {
		t.Fatalf("err = %v", again.Err())
	}
	r.end()
	fresh, _ := r.begin(parent, time.Minute)
	if fresh == again || fresh.Err() != nil {
		t.Fatal("the POST after a timeout got the cancelled context")
	}
	r.end()
	r.close()
	if fresh.Err() == nil {
		t.Fatal("close left the context alive")
	}
}

// A requester's timer is reset by each POST: a POST shorter than the
// timeout, made after a longer idle, is not cut by an earlier POST's timer.
func TestRequester_TimerStartsWithEachPOST(t *testing.T) {
	t.Parallel()
	var r requester
	defer r.close()
	ctx, _ := r.begin(context.Background(), 50*time.Millisecond)
	r.end()
	idle := time.NewTimer(120 * time.Millisecond) // longer than the timeout: a timer left running would have fired
	<-idle.C
	again, _ := r.begin(context.Background(), 50*time.Millisecond)
	if again != ctx || again.Err() != nil {
		t.Fatal("the idle between POSTs cancelled the context")
	}
	select {
	case <-again.Done():
	case <-time.After(wait):
		t.Fatal("the second POST's timeout did not fire")
	}
	r.end()
}

// A callback that answers before it has read the POST leaves the
// transport writing it: the requester builds its next POST in a new
// request, and keeps reusing the one of a POST written whole.
func TestPost_ARequestAnsweredBeforeItIsWrittenIsNotReused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 8)
	go func() { // answers once it has the headers, and reads no more
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
			var got []byte
			buf := make([]byte, 4096)
			for !bytes.Contains(got, []byte("\r\n\r\n")) {
				n, err := c.Read(buf)
				if err != nil {
					break
				}
				got = append(got, buf[:n]...)
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		for len(conns) > 0 {
			_ = (<-conns).Close()
		}
	})
	fine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fine.Close)
	w := NewWebhooks(nil, nil, Config{HubURL: testHubURL,
		Client: netguard.NewClient(loopbackPolicy(t), netguard.Timeouts{Request: time.Minute})})
	q := &queue{w: w, parent: context.Background(), rq: &requester{}}
	defer q.rq.close()
	ctx := context.Background()

	big := wire.Record{Seq: 1, Body: bytes.Repeat([]byte("x"), 64<<20)} // more than the sockets buffer
	if a := w.post(ctx, q, new(*target), hub.Subscription{Callback: "http://" + ln.Addr().String() + "/cb"}, big); !a.ok() {
		t.Fatalf("the early answer: %d %v", a.status, a.err)
	}
	// the transport ends the write once it has given up the connection
	// (tens of milliseconds after the answer); until then the request is
	// not the requester's to reuse
	if sc := q.rq.sc; sc != nil && !sc.wrote.Load() {
		t.Fatal("the request of a POST answered before it was written is kept for the next")
	}
	small := wire.Record{Seq: 2, Body: []byte("<urlset/>")}
	if a := w.post(ctx, q, new(*target), hub.Subscription{Callback: fine.URL + "/cb"}, small); !a.ok() {
		t.Fatalf("the next POST: %d %v", a.status, a.err)
	}
	kept := q.rq.sc
	if kept == nil {
		t.Fatal("the request of a POST written whole is not kept")
	}
	if a := w.post(ctx, q, new(*target), hub.Subscription{Callback: fine.URL + "/cb"}, small); !a.ok() || q.rq.sc != kept {
		t.Fatalf("the POST after: %d %v, its request reused: %t", a.status, a.err, q.rq.sc == kept)
	}
}

// A requester keeps its request for the next POST only once the transport
// has written the last one (scratch.wrote, from its ClientTrace).
func TestRequester_KeepsTheRequestOnlyOnceWritten(t *testing.T) {
	t.Parallel()
	to, err := targetOf(nil, "http://127.0.0.1:9/cb")
	if err != nil {
		t.Fatal(err)
	}
	var r requester
	defer r.close()
	r.begin(context.Background(), 0)
	unwritten := r.scratch()
	unwritten.request(to, unwritten.hdr.h, []byte("<urlset/>"))
	r.end()
	if r.sc != nil {
		t.Fatal("a request the transport may still write is kept")
	}
	r.begin(context.Background(), 0)
	written := r.scratch()
	if written == unwritten {
		t.Fatal("the dropped request came back")
	}
	req := written.request(to, written.hdr.h, []byte("<urlset/>"))
	if tr := httptrace.ContextClientTrace(req.Context()); tr == nil || tr.WroteRequest == nil {
		t.Fatal("the request carries no trace to tell when it is written")
	} else {
		tr.WroteRequest(httptrace.WroteRequestInfo{})
	}
	r.end()
	if r.sc != written {
		t.Fatal("a request written whole is not kept")
	}
}
