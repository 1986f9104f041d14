package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// seedAttempts stores n attempts of sub, oldest first: statuses cycle
// through 500, 404, no response and 204.
func (f *fixture) seedAttempts(sub string, n int) []hub.Attempt {
	f.T.Helper()
	t0 := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	var as []hub.Attempt
	for i := range n {
		a := hub.Attempt{SubID: sub, Time: t0.Add(time.Duration(i) * time.Second), Seq: uint64(10 + i/2), Attempt: i%2 + 1,
			Status: []int{500, 404, 0, 204}[i%4]}
		if a.Status != 204 {
			a.Error = "failed"
		}
		as = append(as, a)
	}
	if err := f.Store.AddAttempts(context.Background(), as); err != nil {
		f.T.Fatal(err)
	}
	return as
}

// GET /admin/subscriptions/{id}/attempts pages through the log newest
// first, each status filter selecting what it names, and a new attempt
// stored between pages neither repeats nor hides one.
func TestAttempts_PagedNewestFirstByStatus(t *testing.T) {
	f := newFixture(t)
	var id string
	for i := range f.seedSubs(openTopic, "open", 1) {
		id = i
	}
	seeded := f.seedAttempts(id, 23)
	base := "/admin/subscriptions/" + id + "/attempts"

	seqs := func(as []hub.Attempt) []uint64 {
		var out []uint64
		for _, a := range as {
			out = append(out, a.Seq*10+uint64(a.Attempt))
		}
		return out
	}
	newestFirst := func(keep func(hub.Attempt) bool) []uint64 {
		var out []hub.Attempt
		for i := len(seeded) - 1; i >= 0; i-- {
			if keep(seeded[i]) {
				out = append(out, seeded[i])
			}
		}
		return seqs(out)
	}
	for _, tc := range []struct {
		status string
		keep   func(hub.Attempt) bool
	}{
		{"", func(hub.Attempt) bool { return true }},
		{"5xx", func(a hub.Attempt) bool { return a.Status >= 500 }},
		{"4xx", func(a hub.Attempt) bool { return a.Status/100 == 4 }},
		{"2xx", func(a hub.Attempt) bool { return a.Status == 204 }},
		{"error", func(a hub.Attempt) bool { return a.Status == 0 }},
		{"404", func(a hub.Attempt) bool { return a.Status == 404 }},
		{"503", func(hub.Attempt) bool { return false }},
	} {
		got, pages := walkPages[hub.Attempt](f, base+"?limit=2&status="+tc.status)
		want := newestFirst(tc.keep)
		if g := seqs(got); len(g) != len(want) || (len(g) > 0 && !equalU(g, want)) {
			t.Errorf("status=%q: listed %v, want %v", tc.status, g, want)
		}
		if wantPages := max(1, (len(want)+1)/2); pages != wantPages && pages != wantPages+1 {
			t.Errorf("status=%q: %d pages of 2 for %d attempts", tc.status, pages, len(want))
		}
	}

	// A page, a new attempt, the next page: it goes on where the first ended.
	status, body, next := f.adminGet(base + "?limit=5")
	if status != http.StatusOK || next == "" {
		t.Fatalf("first page: %d %s (next %q)", status, body, next)
	}
	// another hub's clock may run behind: its attempt is newer in the log
	// but its time is older
	newer := hub.Attempt{SubID: id, Time: seeded[len(seeded)-1].Time.Add(time.Second), Seq: 99, Attempt: 1, Status: 204}
	skewed := hub.Attempt{SubID: id, Time: seeded[0].Time, Seq: 100, Attempt: 1, Status: 204}
	if err := f.Store.AddAttempts(context.Background(), []hub.Attempt{newer, skewed}); err != nil {
		t.Fatal(err)
	}
	rest, _ := walkPages[hub.Attempt](f, next)
	if len(rest) != len(seeded)-5 || !rest[0].Time.Equal(seeded[len(seeded)-6].Time) {
		t.Errorf("after a new attempt the next pages list %d, want the %d older ones", len(rest), len(seeded)-5)
	}
}

func equalU(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Hostile parameters get a 400 with a reason, an unknown subscription 404,
// an empty log [].
func TestAttempts_RefusesWhatItCannotServe(t *testing.T) {
	f := newFixture(t)
	var id string
	for i := range f.seedSubs(openTopic, "open", 1) {
		id = i
	}
	base := "/admin/subscriptions/" + id + "/attempts"
	_, _, subsNext := f.adminGet("/admin/subscriptions?limit=1")
	u, _ := url.Parse(subsNext)
	for _, tc := range []struct{ path, reason string }{
		{base + "?status=6xx", "status"},
		{base + "?status=2XX", "status"},
		{base + "?status=099", "status"},
		{base + "?status=600", "status"},
		{base + "?status=%2B200", "status"},
		{base + "?status=" + strings.Repeat("5", 5000), "status"},
		{base + "?limit=0", "limit"},
		{base + "?cursor=" + url.QueryEscape(u.Query().Get("cursor")), "another"},
		{base + "?cursor=YTA6MDEuMi4z", "no attempt"}, // a0:01.2.3, a leading zero
		{"/admin/subscriptions/NOT-AN-ID/attempts", "32 lowercase hex"},
	} {
		status, body, _ := f.adminGet(tc.path)
		if status != http.StatusBadRequest || !strings.Contains(body, tc.reason) || len(body) > 1024 {
			t.Errorf("GET %.80s: %d %.200q, want 400 naming %q", tc.path, status, body, tc.reason)
		}
	}
	if status, body, _ := f.adminGet("/admin/subscriptions/0123456789abcdef0123456789abcdef/attempts"); status != http.StatusNotFound {
		t.Errorf("unknown subscription: %d %s, want 404", status, body)
	}
	if status, body, next := f.adminGet(base); status != http.StatusOK || strings.TrimSpace(body) != "[]" || next != "" {
		t.Errorf("empty log: %d %q next %q, want [] without a next link", status, body, next)
	}
}
