package delivery

import "github.com/rshub/rshub/wire"

// ValidSigMethod reports whether method is a signature method the
// webhook transport may be configured with (wire.ValidSigMethod).
//
// Deprecated: use wire.ValidSigMethod; this remains until every caller
// does.
func ValidSigMethod(method string) bool { return wire.ValidSigMethod(method) }
