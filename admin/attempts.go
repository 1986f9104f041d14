package admin

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Statuses the status parameter of GET /admin/subscriptions/{id}/attempts
// selects besides an exact HTTP status (100 to 599): a class of statuses,
// or the attempts that got no response.
const (
	AttemptsError = "error" // no response: refused, timed out, netguard-refused
)

// attemptFilter is a parsed status parameter: a class (2 for 2xx), an
// exact status, or no response; the zero filter keeps every attempt.
type attemptFilter struct {
	class, exact int
	noResponse   bool
}

// parseAttemptFilter reads the status parameter of an attempts request.
func parseAttemptFilter(s string) (attemptFilter, error) {
	switch {
	case s == "":
		return attemptFilter{}, nil
	case s == AttemptsError:
		return attemptFilter{noResponse: true}, nil
	case len(s) == 3 && s[1:] == "xx" && s[0] >= '1' && s[0] <= '5':
		return attemptFilter{class: int(s[0] - '0')}, nil
	case len(s) == 3 && s[0] >= '1' && s[0] <= '5' && isDigits(s):
		n, _ := strconv.Atoi(s)
		return attemptFilter{exact: n}, nil
	}
	return attemptFilter{}, badRequest("status %q: one of 1xx, 2xx, 3xx, 4xx, 5xx, %s or an HTTP status from 100 to 599", wire.Clip(s), AttemptsError)
}

// keep reports whether a passes f.
func (f attemptFilter) keep(a hub.Attempt) bool {
	switch {
	case f.noResponse:
		return a.Status == 0
	case f.class != 0:
		return a.Status/100 == f.class
	case f.exact != 0:
		return a.Status == f.exact
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// attemptKey is where an attempt stands in a log: the log is newest first,
// and a page goes on with the attempts older than its last one's key.
type attemptKey struct {
	nanos   int64 // the attempt's time, Unix nanoseconds
	seq     uint64
	attempt int
}

func keyOf(a hub.Attempt) attemptKey {
	return attemptKey{nanos: a.Time.UnixNano(), seq: a.Seq, attempt: a.Attempt}
}

func (k attemptKey) compare(o attemptKey) int {
	return cmp.Or(cmp.Compare(k.nanos, o.nanos), cmp.Compare(k.seq, o.seq), cmp.Compare(k.attempt, o.attempt))
}

// String encodes k as "<nanos>.<seq>.<attempt>", decimal.
func (k attemptKey) String() string {
	return strconv.FormatInt(k.nanos, 10) + "." + strconv.FormatUint(k.seq, 10) + "." + strconv.Itoa(k.attempt)
}

// parseAttemptKey decodes what String makes, and only that.
func parseAttemptKey(s string) (attemptKey, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return attemptKey{}, false
	}
	for _, p := range parts {
		if !isDigits(p) || (len(p) > 1 && p[0] == '0') {
			return attemptKey{}, false
		}
	}
	var k attemptKey
	var err1, err2, err3 error
	k.nanos, err1 = strconv.ParseInt(parts[0], 10, 64)
	k.seq, err2 = strconv.ParseUint(parts[1], 10, 64)
	k.attempt, err3 = strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || k.attempt > 1<<31-1 {
		return attemptKey{}, false
	}
	return k, true
}

// attemptsPage is a page of log (newest first): the attempts f keeps after
// the cursor's, at most limit of them. Attempts stored since the previous
// page are newer and come before the cursor's; when the cursor's attempt
// was trimmed from the log meanwhile, the page starts at the first older
// one.
func attemptsPage(log []hub.Attempt, f attemptFilter, cur cursor, limit int) page[hub.Attempt] {
	start := 0
	if after, paged := parseAttemptKey(cur.after); paged {
		start = len(log)
		if i := slices.IndexFunc(log, func(a hub.Attempt) bool { return keyOf(a) == after }); i >= 0 {
			start = i + 1
		} else if i := slices.IndexFunc(log, func(a hub.Attempt) bool { return keyOf(a).compare(after) < 0 }); i >= 0 {
			start = i
		}
	}
	var p page[hub.Attempt]
	for _, a := range log[start:] {
		if !f.keep(a) {
			continue
		}
		if len(p.items) == limit {
			p.next = &cursor{kind: kindAttempts, after: keyOf(p.items[limit-1]).String()}
			break
		}
		p.items = append(p.items, a)
	}
	return p
}

// attempts answers a page of a subscription's attempt log, newest first.
func (a *API) attempts(r *http.Request) (any, error) {
	v := r.URL.Query()
	f, err := parseAttemptFilter(v.Get("status"))
	if err != nil {
		return nil, err
	}
	limit, err := parseLimit(v.Get("limit"))
	if err != nil {
		return nil, err
	}
	cur, err := parseCursor(v.Get("cursor"), kindAttempts)
	if err != nil {
		return nil, err
	}
	s, err := a.pathSub(r)
	if err != nil {
		return nil, err
	}
	log, err := a.cfg.Store.Attempts(r.Context(), s.ID)
	if err != nil {
		return nil, err
	}
	return attemptsPage(log, f, cur, limit), nil
}
