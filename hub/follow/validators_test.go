package follow

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestTrustedValidators_KeepsOnlyWhatCannotHideAChange(t *testing.T) {
	const (
		date    = "Mon, 01 Jan 2024 00:00:10 GMT"
		before  = "Mon, 01 Jan 2024 00:00:09 GMT"
		nginxET = `"65920a0a-1f4"`
	)
	for _, tc := range []struct {
		name             string
		date, lm, etag   string
		wantLM, wantETag bool
	}{
		{name: "Last-Modified a second before Date is kept", date: date, lm: before, wantLM: true},
		{name: "Last-Modified in Date's second is not", date: date, lm: date},
		{name: "Last-Modified after Date is not", date: before, lm: date},
		{name: "Last-Modified without Date is not", lm: before},
		{name: "Last-Modified unreadable is not", date: date, lm: "yesterday"},
		{name: "Date unreadable: Last-Modified is not kept", date: "soon", lm: before},
		{name: "strong ETag alone is kept, Date or not", etag: `"abc"`, wantETag: true},
		{name: "strong ETag beside an old Last-Modified: both kept", date: date, lm: before, etag: nginxET, wantLM: true, wantETag: true},
		{name: "strong ETag beside a Last-Modified of Date's second: neither (nginx builds it from mtime and size)", date: date, lm: date, etag: nginxET},
		{name: "strong ETag beside a Last-Modified and no Date: neither", lm: before, etag: nginxET},
		{name: "weak ETag is never kept", date: date, etag: `W/"abc"`},
		{name: "weak ETag beside an old Last-Modified: the Last-Modified only", date: date, lm: before, etag: `W/"abc"`, wantLM: true},
		{name: "unquoted ETag is not an entity tag", etag: `abc`},
		{name: "nothing", date: date},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range map[string]string{"Date": tc.date, "Last-Modified": tc.lm, "ETag": tc.etag} {
				if v != "" {
					h.Set(k, v)
				}
			}
			got := TrustedValidators(h)
			want := Validators{}
			if tc.wantLM {
				want.LastModified = tc.lm
			}
			if tc.wantETag {
				want.ETag = tc.etag
			}
			if got != want {
				t.Errorf("TrustedValidators(Date %q, Last-Modified %q, ETag %q) = %+v, want %+v", tc.date, tc.lm, tc.etag, got, want)
			}
		})
	}
}

// FuzzTrustedValidators: whatever the headers, what is kept is what the
// response said, a weak ETag never, a Last-Modified only before a Date.
func FuzzTrustedValidators(f *testing.F) {
	f.Add("Mon, 01 Jan 2024 00:00:10 GMT", "Mon, 01 Jan 2024 00:00:09 GMT", `"x"`)
	f.Add("", "Mon, 01 Jan 2024 00:00:09 GMT", `W/"x"`)
	f.Fuzz(func(t *testing.T, date, lm, etag string) {
		h := http.Header{"Date": {date}, "Last-Modified": {lm}, "Etag": {etag}}
		v := TrustedValidators(h)
		if v.ETag != "" && (v.ETag != etag || strings.HasPrefix(etag, "W/")) {
			t.Fatalf("ETag %q kept from %q", v.ETag, etag)
		}
		if v.LastModified != "" {
			mod, err := http.ParseTime(lm)
			d, derr := http.ParseTime(date)
			if v.LastModified != lm || err != nil || derr != nil || !mod.Before(d) {
				t.Fatalf("Last-Modified %q kept beside Date %q", lm, date)
			}
		}
		if v.ETag != "" && lm != "" && v.LastModified == "" {
			t.Fatalf("ETag %q kept beside a Last-Modified %q not kept", etag, lm)
		}
	})
}

// A list the index newly shows as closed is read once more in full, with
// no condition: whatever its validators promised while it was open, the
// tail the Source wrote before closing it is read.
func TestFollower_AListNewlyClosedIsReadOnceMoreInFull(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.src.set("/idx.xml", index(r.srv.URL, [3]string{"/1.xml", t0, ""}))
	r.src.set("/1.xml", cl(t0, "", "a@"+t1))
	f := r.follower()
	r.poll(t, f)
	r.poll(t, f) // the open list is read conditionally: 304
	if f.fetch.notModified == 0 {
		t.Fatal("the open list was never answered 304: the test proves nothing")
	}
	r.src.set("/2.xml", cl(t1, "", "b@"+t2))
	r.src.set("/idx.xml", index(r.srv.URL, [3]string{"/1.xml", t0, t1}, [3]string{"/2.xml", t1, ""}))
	before := r.src.conditional["/1.xml"]
	if err := f.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := r.src.conditional["/1.xml"] - before; n != 0 {
		t.Errorf("the newly closed list was read with %d conditional GETs, want none", n)
	}
	if got := r.hub.published(); got != "a b" {
		t.Errorf("published %q, want a b", got)
	}
}
