package delivery

import (
	"context"
	"testing"
	"time"
)

type requesterKey struct{}

// A requester's context carries its parent's values but not its
// cancellation, is reused from POST to POST, and one whose timeout fired
// is replaced for the next POST, whose timer starts afresh.
func TestRequester_ReusesItsContextUntilATimeoutFires(t *testing.T) {
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
