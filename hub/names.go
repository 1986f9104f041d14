package hub

import (
	"fmt"
	"strings"

	"github.com/rshub/rshub/wire"
)

// The rule for the name of a new channel, the same at every door (admin
// API, --channels file, --open-topics, followed channels): ValidChannelName
// (1–64 of A-Z a-z 0-9 - _), starting and ending with a letter or a digit,
// and not reserved. Reserved are:
//
//   - names ending in wire.FrameworkSuffix ("-framework"): the namespace of
//     the framework channels the hub derives for every channel (RSF-1).
//     Refusing the suffix outright, rather than checking whether the
//     channel it would shadow exists, keeps the two names from colliding in
//     either order and without a check-then-act race between hubs sharing
//     a store.
//   - "rshub", the hub's own prefix (NATS subjects, parameters).
//   - the device names of Windows (CON, PRN, AUX, NUL, COM0–9, LPT0–9), in
//     any case: a name may become a file name in a mirror or an export.
//
// Lookups by name keep accepting any ValidChannelName, so a channel stored
// before this rule can still be read and deleted.

// checkNewChannelName returns why name cannot be given to a new channel,
// or nil.
func checkNewChannelName(name string) error {
	const rule = "names are 1-64 characters of A-Z a-z 0-9 - _, starting and ending with a letter or digit"
	if name == "" {
		return fmt.Errorf("a channel name is required (%s)", rule)
	}
	if !ValidChannelName(name) || !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return fmt.Errorf("channel name %q: %s", wire.Clip(name), rule)
	}
	if parent, ok := wire.FrameworkParent(name); ok {
		return fmt.Errorf("channel name %q is reserved: names ending in %s name the framework channels the hub derives (this one is channel %q's)", name, wire.FrameworkSuffix, parent)
	}
	if reservedName(name) {
		return fmt.Errorf("channel name %q is reserved (rshub and the Windows device names CON, PRN, AUX, NUL, COM0-9, LPT0-9 in any case)", name)
	}
	return nil
}

// reservedName reports whether name is one of the reserved words.
func reservedName(name string) bool {
	n := strings.ToUpper(name)
	switch n {
	case "RSHUB", "CON", "PRN", "AUX", "NUL":
		return true
	}
	return len(n) == 4 && (strings.HasPrefix(n, "COM") || strings.HasPrefix(n, "LPT")) && n[3] >= '0' && n[3] <= '9'
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
