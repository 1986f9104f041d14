package admin

import (
	"net/http"

	"github.com/rshub/rshub/hub/jslog"
)

// Quarantine is the log as the admin API shows the messages it can never
// decode, which every reader skips; *jslog.Log implements it.
type Quarantine interface {
	QuarantinedTotal() uint64
	Quarantined() []jslog.Quarantined
}

// quarantineList is the answer of GET /admin/quarantine.
type quarantineList struct {
	// Total counts every message quarantined since the hub started, also
	// those no longer listed.
	Total   uint64              `json:"total"`
	Records []jslog.Quarantined `json:"records"` // by sequence, at most jslog.MaxQuarantined
}

// quarantine answers GET /admin/quarantine: the log's messages that never
// decode (sequence, channel, reason, size), skipped by every reader. The
// list is one bounded page: a cursor or limit is refused, as a bad one is
// by every paged list, rather than ignored.
func (a *API) quarantine(r *http.Request) (any, error) {
	if q := r.URL.Query(); q.Has("cursor") || q.Has("limit") {
		return nil, badRequest("the quarantine is one list of at most %d records, not paged: it takes no cursor or limit", jslog.MaxQuarantined)
	}
	if a.cfg.Quarantine == nil {
		return quarantineList{Records: []jslog.Quarantined{}}, nil
	}
	return quarantineList{Total: a.cfg.Quarantine.QuarantinedTotal(), Records: nonNil(a.cfg.Quarantine.Quarantined())}, nil
}
