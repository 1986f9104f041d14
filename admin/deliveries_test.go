package admin_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rshub/rshub/delivery"
)

// walkDeliveries follows the next links of a deliveries list from path
// and returns the IDs listed, in order.
func (f *fixture) walkDeliveries(path string) []string {
	f.T.Helper()
	items, _ := walkPages[delivery.SubStats](f, path)
	var out []string
	for _, s := range items {
		out = append(out, s.ID)
	}
	return out
}

// GET /admin/deliveries pages through the engine's queues by ID, from its
// index when it has one, and status=failing through the failing ones.
func TestDeliveries_Paged(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("index=%v", indexed), func(t *testing.T) {
			f := newFixture(t)
			stats, failing := healthOf(f.seedSubs(openTopic, "open", 40))
			f = f.withDeliveries(t, stats, indexed)
			var all []string
			for _, s := range stats {
				all = append(all, s.ID)
			}
			if got := f.walkDeliveries("/admin/deliveries?limit=3"); !slices.Equal(got, all) {
				t.Errorf("pages of 3 listed %d queues, want the %d in order", len(got), len(all))
			}
			if got := f.walkDeliveries("/admin/deliveries"); !slices.Equal(got, all) {
				t.Errorf("the default page listed %d queues, want %d", len(got), len(all))
			}
			if got := f.walkDeliveries("/admin/deliveries?status=failing&limit=2"); !slices.Equal(got, failing) {
				t.Errorf("failing pages listed %d, want the %d failing", len(got), len(failing))
			}
			// a cursor of another list is refused
			_, _, next := f.adminGet("/admin/subscriptions?limit=1")
			u, _ := url.Parse(next)
			status, body, _ := f.adminGet("/admin/deliveries?cursor=" + url.QueryEscape(u.Query().Get("cursor")))
			if status != http.StatusBadRequest || !strings.Contains(body, "another") {
				t.Errorf("a subscriptions cursor on deliveries: %d %q, want 400", status, body)
			}
			if status, body, _ := f.adminGet("/admin/deliveries?limit=1001"); status != http.StatusBadRequest {
				t.Errorf("limit 1001: %d %q, want 400", status, body)
			}
		})
	}
}
