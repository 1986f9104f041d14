package delivery

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// testParallel is how many of this package's parallel tests run at once
// unless -parallel says otherwise. The tests spend most of their time
// waiting on loopback sockets, an embedded NATS server and the engines'
// timers, not on a CPU: run GOMAXPROCS at a time (the default) on a
// 2-core machine, the package took minutes for about one of CPU. Tests
// that count the process's goroutines, let a host's answer times steer
// the engine, or bound a wall-clock span (a rate, a request timeout, a
// race with the engine's own loop) do not call t.Parallel and so run
// alone, before the others.
const testParallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(testParallel)); err != nil {
			panic(err)
		}
	}
	os.Exit(withSharedNATS(m.Run))
}
