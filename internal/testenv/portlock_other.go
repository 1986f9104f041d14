//go:build !unix

package testenv

import "io"

// portLock claims nothing where flock is not at hand: ports are then
// distinct within one test binary only.
func portLock(int) (io.Closer, bool) { return nil, true }
