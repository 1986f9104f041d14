package mirror

import "time"

// Event kinds.
const (
	EventNotification = "notification" // a notification was applied
	EventDuplicate    = "duplicate"    // a notification already applied was skipped
	EventGap          = "gap"          // a notification's from is after P: catching up
	EventCatchUp      = "catchup"      // a catch-up from the hub's Change Lists started
	EventProgress     = "progress"     // a catch-up or baseline advanced (Done of Total)
	EventCaughtUp     = "caughtup"     // a catch-up or baseline ended
	EventBaseline     = "baseline"     // a baseline started
	EventFile         = "file"         // a file was written or removed
	EventSkipped      = "skipped"      // an entry was not applied (Message says why)
	EventWarning      = "warning"
	EventInfo         = "info"
	EventFramework    = "framework" // an entry of a framework notification (Loc, Change, Until = its datetime)
)

// Event is one thing the Mirror did, for progress displays and logs. The
// JSON form is one object per event.
type Event struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"event"`
	Seq     uint64    `json:"seq,omitempty"`
	From    time.Time `json:"from,omitzero"`
	Until   time.Time `json:"until,omitzero"`
	Entries int       `json:"entries,omitempty"`
	Done    int       `json:"done,omitempty"`
	Total   int       `json:"total,omitempty"`
	Change  string    `json:"change,omitempty"`
	Loc     string    `json:"loc,omitempty"`
	Path    string    `json:"path,omitempty"`
	Message string    `json:"message,omitempty"`
	// Elapsed is how long a catch-up or baseline took (EventCaughtUp).
	Elapsed time.Duration `json:"elapsed_ns,omitempty"`
}
