package hub

import (
	"strings"
	"testing"
)

// FuzzCheckNewChannelName: an accepted name is a valid channel name, a
// single NATS subject token that starts and ends with a letter or digit,
// and is not in the framework namespace.
func FuzzCheckNewChannelName(f *testing.F) {
	for _, s := range []string{"demo", "", "rshub", "CON", "_", "-", "b-framework", "a.b", "com1", "x_y-z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkNewChannelName(name) != nil {
			return
		}
		if !ValidChannelName(name) || strings.ContainsAny(name, ".*> ") || !alnum(name[0]) || !alnum(name[len(name)-1]) || strings.HasSuffix(name, "-framework") || reservedName(name) {
			t.Fatalf("accepted %q", name)
		}
	})
}
