package pull

import (
	"strconv"
	"unicode/utf8"
)

// maxLogged is how many bytes of a string a client chose (an entry's
// location, a request path) go into a log line or an error message. clip is
// the same as the delivery package's.
const maxLogged = 256

// clip bounds a string a client chose for logs and error messages: beyond
// maxLogged bytes it is cut at a character boundary and marked with "…" and
// its original length.
func clip(s string) string {
	if len(s) <= maxLogged {
		return s
	}
	n := maxLogged
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
