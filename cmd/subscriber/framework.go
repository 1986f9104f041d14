package main

import "flag"

// frameworkUsage documents --framework.
const frameworkUsage = "also follow the channel's framework channel (<channel>-framework, advertised in the hub's Capability List " +
	"with capability framework-notification) over the same transport: each framework notification is printed as framework events " +
	"(a Change List closed, a new one opened, an archive page created or updated), and when a Change List closes beyond the " +
	"mirror's position the mirror heals from the hub's Change Lists at once instead of waiting for --resync. " +
	"Ignored when the hub advertises none, and with --transport websocket when a filter is set (the session's filter would empty its entries)"

// addFrameworkFlag registers --framework (on by default: one more
// subscription, session channel or subject, and one small document per
// Change List rotation).
func addFrameworkFlag(fs *flag.FlagSet, s *settings) {
	fs.BoolVar(&s.Framework, "framework", true, frameworkUsage)
}
