package admin_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/rshub/rshub/internal/edgetest"
)

// POST /admin/channels refuses every hostile channel definition with 400
// and the reason (issue 23 items 4, 5 and 9), and stores none of them.
func TestPutChannel_HostileDefinitionsRefused(t *testing.T) {
	f := newFixture(t)
	for _, c := range edgetest.Channels() {
		if status, body := f.adminDo(http.MethodPost, "/admin/channels", string(c.JSON())); status != http.StatusBadRequest {
			t.Errorf("%s: %d %.200s, want 400", c.Why, status, body)
		}
	}
	if chs, err := f.Store.Channels(context.Background()); err != nil || len(chs) != 0 {
		t.Fatalf("store holds %d channels (%v), want none", len(chs), err)
	}
}
