package staticsource

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Source whose Capability List names a Change List that breaks a strict
// rule (no root from) and a Resource List, served by python3 -m
// http.server. A strict channel keeps failing and says why, in
// /admin/follow (lastError) and the polls metric, and publishes nothing
// from the Resource List; a lenient channel reads the Change List with a
// leniency. With the Change List gone (404), a lenient channel follows the
// Resource List and records the fallback.
func TestStaticSource_AStrictChannelReportsItsSourcesBrokenChangeList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startPython(t, dir, nil)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	head := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
`
	now := stamp(time.Now())
	write("capabilitylist.xml", head+`<rs:md capability="capabilitylist"/>
<url><loc>`+srv.base+`/changelist.xml</loc><rs:md capability="changelist"/></url>
<url><loc>`+srv.base+`/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>
`)
	write("changelist.xml", head+`<rs:md capability="changelist"/>
<url><loc>`+srv.base+`/res/a.txt</loc><rs:md change="created" datetime="`+now+`"/></url>
</urlset>
`)
	write("resourcelist.xml", head+`<rs:md capability="resourcelist" at="`+now+`"/>
<url><loc>`+srv.base+`/res/a.txt</loc><lastmod>`+now+`</lastmod></url>
</urlset>
`)
	h := startHub(t)
	strict := newReceiver(t)
	h.follow(t, "strict", srv.base+"/capabilitylist.xml", "100ms", strict)
	code, b := h.do(t, http.MethodPost, "/admin/channels", map[string]any{"name": "lenient", "follow": srv.base + "/capabilitylist.xml", "pollInterval": "100ms", "validation": "lenient"})
	if code != http.StatusCreated {
		t.Fatalf("POST /admin/channels: %d %s", code, b)
	}
	waitFor(t, 60*time.Second, "the strict channel's polls fail", func() bool { return h.followStatus(t, "strict").Errors >= 2 })
	st := h.followStatus(t, "strict")
	if !strings.Contains(st.LastError, "strict channel") || !strings.Contains(st.LastError, "changelist.xml") {
		t.Errorf("strict lastError %q: want the Change List's error and why it is not followed", st.LastError)
	}
	_, metrics := h.do(t, http.MethodGet, "/metrics", nil)
	m := regexp.MustCompile(`rshub_follow_polls_total\{channel="strict",outcome="error"\} (\d+)`).FindSubmatch(metrics)
	if n, _ := strconv.Atoi(string(submatch(m))); n < 2 {
		t.Errorf("rshub_follow_polls_total{channel=strict,outcome=error} = %q, want 2 or more", submatch(m))
	}
	if ids, _, _ := strict.got(); len(ids) != 0 {
		t.Errorf("the strict channel published %v", ids)
	}
	// the lenient channel reads the Change List, recording its leniency
	waitFor(t, 60*time.Second, "the lenient channel follows the Change List", func() bool {
		p, _ := h.followed(t, "lenient")
		return p.ChangeList == srv.base+"/changelist.xml"
	})
	// with no Change List at all, the lenient channel falls back, and says so
	if err := os.Remove(filepath.Join(dir, "changelist.xml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the lenient channel falls back to the Resource List and records it", func() bool {
		p, rules := h.followed(t, "lenient")
		return p.ChangeList == "" && p.ResourceList == srv.base+"/resourcelist.xml" && slices.Contains(rules, "changelist-fallback")
	})
}

// plan is what these tests read of a follow status's plan.
type plan struct {
	ChangeList, ResourceList string
}

// followed returns a channel's plan and the rules of its leniencies, from
// GET /admin/follow.
func (h testHub) followed(t *testing.T, channel string) (plan, []string) {
	t.Helper()
	_, b := h.do(t, http.MethodGet, "/admin/follow", nil)
	var sts []struct {
		Channel    string
		Plan       plan
		Leniencies []struct{ Rule string }
	}
	if err := json.Unmarshal(b, &sts); err != nil {
		t.Fatalf("GET /admin/follow: %v %s", err, b)
	}
	for _, st := range sts {
		if st.Channel == channel {
			var rules []string
			for _, l := range st.Leniencies {
				rules = append(rules, l.Rule)
			}
			return st.Plan, rules
		}
	}
	return plan{}, nil
}

func submatch(m [][]byte) []byte {
	if len(m) < 2 {
		return nil
	}
	return m[1]
}
