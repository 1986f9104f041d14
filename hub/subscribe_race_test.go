package hub_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// pausingStore is the real store whose first write of an active
// subscription without an operator's rate waits, once written, until
// resume is closed: a verification stopped between its write and its
// hand-over to the delivery engine.
type pausingStore struct {
	hub.Store
	once    sync.Once
	written chan struct{} // closed once that write is done
	resume  chan struct{}
}

func (s *pausingStore) PutSubscription(ctx context.Context, sub hub.Subscription) error {
	if err := s.Store.PutSubscription(ctx, sub); err != nil {
		return err
	}
	if sub.State == hub.SubActive && sub.OperatorRate == 0 {
		s.once.Do(func() {
			close(s.written)
			<-s.resume
		})
	}
	return nil
}

// An operator's rate set while a verification is between its write and
// its hand-over to the delivery engine waits for it: the engine ends with
// the stored copy, rate included, not the verification's older one.
func TestSubscribe_OperatorRateDuringVerificationReachesTheEngine(t *testing.T) {
	st := &pausingStore{written: make(chan struct{}), resume: make(chan struct{})}
	f := newFixture(t, func(c *hub.Config) {
		st.Store = c.Store
		c.Store = st
	})
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	if status, body := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"))); status != http.StatusAccepted {
		t.Fatalf("status %d %q, want 202", status, body)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		select {
		case <-st.written:
			return true
		default:
			return false
		}
	}, "the verification's write")
	id := hub.SubscriptionID(ch.Topic, cb.URL("/cb"))
	const rate = 3
	patched := make(chan error, 1)
	go func() {
		_, err := f.Hub.SetOperatorRate(context.Background(), id, rate)
		patched <- err
	}()
	// the rate either waits for the verification (2: it and the
	// verification) or, were nothing to keep them apart, is done already
	testenv.Eventually(t, 10*time.Second, func() bool {
		return f.Hub.SubscriptionLockRefs(id) == 2 || len(patched) == 1
	}, "the operator's rate waiting or done")
	close(st.resume)
	if err := <-patched; err != nil {
		t.Fatalf("SetOperatorRate: %v", err)
	}
	stored, err := f.Store.Subscription(context.Background(), id)
	if err != nil || stored.OperatorRate != rate {
		t.Fatalf("stored %+v, %v: want operator rate %d", stored, err, rate)
	}
	acts := f.Active.Activated()
	if len(acts) == 0 || acts[len(acts)-1].OperatorRate != rate {
		t.Fatalf("the engine was handed %+v last, want the stored copy with operator rate %d", acts, rate)
	}
}
