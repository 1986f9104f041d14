package bench

import (
	"context"
	"runtime/pprof"
)

// goLabelled runs f on a new goroutine labelled side=side in CPU profiles
// (--cpuprofile), as is every goroutine it starts: `go tool pprof
// -tagfocus side=hub` shows the hub's share of a run alone, beside the
// ceiling's (side=ceiling) and the callback servers' (side=callback server).
func goLabelled(side string, f func()) {
	go pprof.Do(context.Background(), pprof.Labels("side", side), func(context.Context) { f() })
}
