package gcgov

import (
	"io"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func noEnv(string) (string, bool) { return "", false }

// gcPercent returns the runtime's GOGC setting without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func TestLimitFor(t *testing.T) {
	const mib = 1 << 20
	for name, c := range map[string]struct {
		m    memState
		want int64
	}{
		"a 100 MiB live heap: GOGC=100's goal (twice it, plus stacks and globals), the runtime's 3 % headroom and what it maps outside the heap": {
			m:    memState{live: 100 * mib, stacks: 2 * mib, globals: 1 * mib, total: 300 * mib, released: 20 * mib, free: 50 * mib, objects: 210 * mib},
			want: 20*mib + 203*mib + 203*mib/97*3,
		},
		"a small heap: the runtime's 4 MiB minimum and its 1 MiB of headroom": {
			m:    memState{live: 1 * mib, total: 10 * mib, free: 2 * mib, objects: 3 * mib},
			want: 5*mib + 4*mib + 1*mib,
		},
		"no collection yet: the heap's objects count as live": {
			m:    memState{live: 0, total: 100 * mib, objects: 50 * mib},
			want: 50*mib + 100*mib + 100*mib/97*3,
		},
		"stats caught between updates: no memory outside the heap": {
			m:    memState{live: 10 * mib, total: 30 * mib, free: 10 * mib, objects: 25 * mib},
			want: 20*mib + 1*mib,
		},
	} {
		if got := limitFor(c.m); got != c.want {
			t.Errorf("%s: limitFor = %d, want %d", name, got, c.want)
		}
	}
}

// TestGovernor_TakesOverWhileIdleAndGivesBackAtTheNextCollection runs the
// governor in this process with a short idle time: the runtime's pacing
// while collections come, GOGC off and a limit at GOGC=100's next goal once
// none has come for a while, and the runtime's pacing again at the first
// collection after that, which the heap's growth brings.
func TestGovernor_TakesOverWhileIdleAndGivesBackAtTheNextCollection(t *testing.T) {
	g := start(noEnv, quiet(), 100*time.Millisecond, 10*time.Millisecond)
	if g == nil {
		t.Fatal("Start governed nothing in a process with the runtime's defaults")
	}
	defer g.Stop()

	// Hold 32 MiB, collect, and go idle.
	held := make([][]byte, 0, 512)
	for range 512 {
		held = append(held, make([]byte, 64<<10))
	}
	runtime.GC()
	testenv.Eventually(t, 10*time.Second, func() bool { return g.Stats().Engaged }, "the governor takes over an idle process")
	st := g.Stats()
	if p := gcPercent(); p != -1 {
		t.Fatalf("GOGC = %d while engaged, want off (-1): only that stops the periodic collection", p)
	}
	if l := debug.SetMemoryLimit(-1); l != st.Limit {
		t.Fatalf("memory limit %d, want the governor's %d", l, st.Limit)
	}
	live := int64(len(held)) * 64 << 10
	if st.Limit < 2*live || st.Limit > 2*live+live/2+32<<20 {
		t.Errorf("limit %d MiB holding %d MiB, want about twice that, where GOGC=100 collects", st.Limit>>20, live>>20)
	}

	// Allocating brings a collection under the limit, which gives the
	// pacing back to the runtime.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0 := ms.NumGC
	cycles := st.Cycles
	var sink []byte
	for i := 0; g.Stats().Cycles == cycles && i < 1<<16; i++ {
		sink = make([]byte, 64<<10)
		sink[0] = byte(i)
	}
	_ = sink
	testenv.Eventually(t, 10*time.Second, func() bool { return g.Stats().Cycles > cycles }, "a collection after the heap grew")
	runtime.ReadMemStats(&ms)
	if ms.NumGC == gc0 {
		t.Fatal("no collection while 4 GiB went through the heap")
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return !g.Stats().Engaged }, "the governor gives the pacing back")
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC = %d after a collection, want the runtime's 100 back", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d after a collection, want none", l)
	}

	// Busy, it stays out of the way: a collection every few ms is never
	// idle for 100 ms.
	engagements := g.Stats().Engagements
	for range 20 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if n := g.Stats().Engagements - engagements; n != 0 {
		t.Errorf("engaged %d times while collecting every 5 ms", n)
	}
	runtime.KeepAlive(held)
}

func TestGovernor_StopGivesThePacingBack(t *testing.T) {
	g := start(noEnv, quiet(), 20*time.Millisecond, 5*time.Millisecond)
	if g == nil {
		t.Fatal("Start governed nothing")
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return g.Stats().Engaged }, "the governor takes over")
	g.Stop()
	g.Stop() // twice is harmless
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC = %d after Stop, want 100", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d after Stop, want none", l)
	}
	// Nothing engages after Stop, whatever the time without a collection.
	runtime.GC()
	time.Sleep(60 * time.Millisecond)
	if g.Stats().Engaged || gcPercent() != 100 {
		t.Error("the governor engaged after Stop")
	}
	var nilGov *Governor
	nilGov.Stop()
}

func TestGovernor_LeavesTheOperatorsChoice(t *testing.T) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		env := func(k string) (string, bool) { return "200", k == name }
		if g := Start(env, quiet(), Idle); g != nil {
			g.Stop()
			t.Errorf("with %s set, Start governed", name)
		}
		if p := gcPercent(); p != 100 {
			t.Errorf("with %s set, GOGC became %d", name, p)
		}
	}
	prev := debug.SetGCPercent(50) // the program's own choice
	if g := Start(noEnv, quiet(), Idle); g != nil {
		g.Stop()
		t.Error("Start governed with GOGC set to 50 by the program")
	}
	if p := debug.SetGCPercent(prev); p != 50 {
		t.Errorf("Start changed the program's GOGC 50 to %d", p)
	}
	debug.SetMemoryLimit(1 << 40)
	if g := Start(noEnv, quiet(), Idle); g != nil {
		g.Stop()
		t.Error("Start governed with a memory limit set by the program")
	}
	if l := debug.SetMemoryLimit(math.MaxInt64); l != 1<<40 {
		t.Errorf("Start changed the program's memory limit to %d", l)
	}
}
