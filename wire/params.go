package wire

// Subscription parameters rshub reads beside WebSub's (hub.mode,
// hub.topic, hub.callback, hub.secret, hub.lease_seconds). A hub that does
// not know them ignores them, so a subscriber may always send them.
const (
	// ParamSignatureScheme picks how deliveries are signed when the
	// subscription has a secret: SchemeWebSub (X-Hub-Signature, the
	// default), SchemeStandard (Standard Webhooks: webhook-id,
	// webhook-timestamp, webhook-signature) or SchemeBoth.
	ParamSignatureScheme = "rshub.signature"
	// ParamFilterPrefix, repeatable, delivers only the entries whose loc
	// starts with one of the given prefixes.
	ParamFilterPrefix = "rshub.filter.prefix"
	// ParamFilterChange, a comma-separated list of created, updated and
	// deleted, delivers only the entries with one of those changes.
	ParamFilterChange = "rshub.filter.change"
	// ParamCoalesce opts a subscription in (CoalesceOn) or out
	// (CoalesceOff) of coalesced catch-up: when its backlog passes the
	// hub's threshold it receives one notification per run covering the
	// run's window with the net change per resource, instead of each.
	ParamCoalesce = "rshub.coalesce"
	// ParamRate limits the subscription's deliveries per second (a decimal
	// number, 0.01 to 10000), within the hub operator's maximum.
	ParamRate = "rshub.rate"
)

// Values of ParamCoalesce.
const (
	CoalesceOn  = "on"
	CoalesceOff = "off"
)

// Signature schemes, the values of ParamSignatureScheme.
const (
	SchemeWebSub   = "websub"
	SchemeStandard = "standard"
	SchemeBoth     = "both"
)

// ValidScheme reports whether s names a signature scheme ("" is the
// default, SchemeWebSub).
func ValidScheme(s string) bool {
	switch s {
	case "", SchemeWebSub, SchemeStandard, SchemeBoth:
		return true
	}
	return false
}

// Query parameters of the WebSocket and Server-Sent Events sessions that
// filter entries like ParamFilterPrefix and ParamFilterChange.
const (
	ParamPrefix = "prefix" // repeatable
	ParamChange = "change" // comma-separated
)
