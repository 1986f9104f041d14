package delivery

import (
	"strconv"

	"github.com/rshub/rshub/wire"
)

// maxLogged is how many bytes of a string a client chose (a callback URL, a
// topic, an origin, a query value) go into a log line or an error message:
// wire.Clip's bound.
const maxLogged = 256

// quote is wire.Clip for a string quoted in a message: quoted first (Go syntax,
// so control and invalid bytes are escaped), then clipped, since escaping
// can make a string four times longer.
func quote(s string) string { return wire.Clip(strconv.Quote(s)) }

// clippedError is an error whose message is clipped; it still wraps the
// original for errors.Is and errors.As.
type clippedError struct {
	msg string
	err error
}

func (e *clippedError) Error() string { return e.msg }
func (e *clippedError) Unwrap() error { return e.err }

// clipError bounds the message of an error that may quote a string a client
// chose (a URL refused by netguard).
func clipError(err error) error {
	if err == nil || len(err.Error()) <= maxLogged {
		return err
	}
	return &clippedError{msg: wire.Clip(err.Error()), err: err}
}
