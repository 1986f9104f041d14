package admin_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/hub"
)

// failingStore is a hub.Store whose channel writes fail while down is set,
// as a store that does not answer.
type failingStore struct {
	hub.Store
	down *atomic.Bool
}

func (s failingStore) PutChannel(ctx context.Context, c hub.Channel) error {
	if s.down.Load() {
		return errors.New("dial tcp 127.0.0.1:6379: connection refused")
	}
	return s.Store.PutChannel(ctx, c)
}

// POST /admin/channels tells its refusals apart: a definition that breaks
// a rule is 400, a name another topic holds is 409, and a store that does
// not answer is 503 with Retry-After (it was 400, telling the operator
// their definition was wrong).
func TestPutChannel_StatusTellsWhoIsAtFault(t *testing.T) {
	var down atomic.Bool
	f := newFixture(t, func(c *hub.Config, _ *admin.Config) { c.Store = failingStore{Store: c.Store, down: &down} })
	post := func(body string) (int, string) { return f.adminDo(http.MethodPost, "/admin/channels", body) }
	if code, body := post(`{"name": "a", "topic": "http://127.0.0.1:1/a", "trust": "open"}`); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("a good channel: %d %s", code, body)
	}
	if code, body := post(`{"name": "rshub", "topic": "http://127.0.0.1:1/r", "trust": "open"}`); code != http.StatusBadRequest {
		t.Errorf("a reserved name: %d %s, want 400", code, body)
	}
	if code, body := post(`{"name": "a", "topic": "http://127.0.0.1:1/other", "trust": "open"}`); code != http.StatusConflict {
		t.Errorf("a name another topic holds: %d %s, want 409", code, body)
	}
	down.Store(true)
	if code, body := post(`{"name": "b", "topic": "http://127.0.0.1:1/b", "trust": "open"}`); code != http.StatusServiceUnavailable {
		t.Errorf("the store down: %d %s, want 503", code, body)
	}
}
