package gcgov

import (
	"io"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
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
		"a 100 MiB live heap: the goal 200 MiB plus stacks and globals, a tenth more, the runtime's 3 % headroom and what it maps outside the heap": {
			m:    memState{live: 100 * mib, stacks: 2 * mib, globals: 1 * mib, total: 300 * mib, released: 20 * mib, free: 50 * mib, objects: 210 * mib},
			want: 20*mib + (203*mib + 203*mib/100*10) + (203*mib+203*mib/100*10)/97*3,
		},
		"a small heap: the runtime's 4 MiB minimum and its 1 MiB of headroom": {
			m:    memState{live: 1 * mib, total: 10 * mib, free: 2 * mib, objects: 3 * mib},
			want: 5*mib + (4*mib + 4*mib/100*10) + 1*mib,
		},
		"no collection yet: the heap's objects count as live": {
			m:    memState{live: 0, total: 100 * mib, objects: 50 * mib},
			want: 50*mib + (100*mib + 100*mib/100*10) + (100*mib+100*mib/100*10)/97*3,
		},
		"stats caught between updates: no memory outside the heap": {
			m:    memState{live: 10 * mib, total: 30 * mib, free: 10 * mib, objects: 25 * mib},
			want: (20*mib + 20*mib/100*10) + 1*mib,
		},
	} {
		if got := limitFor(c.m); got != c.want {
			t.Errorf("%s: limitFor = %d, want %d", name, got, c.want)
		}
	}
}

// TestGovernor_CollectsAsTheHeapGrows runs the governor in this process:
// GOGC off, collections still come as the program allocates, and after
// each the limit follows the live heap.
func TestGovernor_CollectsAsTheHeapGrows(t *testing.T) {
	g := Start(noEnv, quiet())
	if g == nil {
		t.Fatal("Start governed nothing in a process with the runtime's defaults")
	}
	defer g.Stop()
	if p := gcPercent(); p != -1 {
		t.Fatalf("GOGC = %d while governed, want off (-1): only that stops the periodic collection", p)
	}
	if limit, _ := g.Limit(); debug.SetMemoryLimit(-1) != limit || limit == math.MaxInt64 {
		t.Fatalf("memory limit %d, want the governor's %d", debug.SetMemoryLimit(-1), limit)
	}

	// Hold 64 MiB and churn 1 GiB of garbage through the heap: with GOGC
	// off and no limit following the heap, nothing would be collected.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0 := ms.NumGC
	held := make([][]byte, 0, 1024)
	var sink []byte
	for i := range 16384 {
		b := make([]byte, 64<<10)
		b[0] = byte(i)
		if i%16 == 0 {
			held = append(held, b)
		}
		sink = b
	}
	_ = sink
	runtime.ReadMemStats(&ms)
	if n := ms.NumGC - gc0; n < 3 {
		t.Errorf("%d collections while 1 GiB went through the heap, want several", n)
	}
	if ms.HeapSys > 1<<30 {
		t.Errorf("heap reached %d MiB holding 64 MiB: garbage was not collected", ms.HeapSys>>20)
	}

	// After a collection the limit allows about twice the live heap.
	_, before := g.Limit()
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for _, n := g.Limit(); n == before; _, n = g.Limit() {
		if time.Now().After(deadline) {
			t.Fatal("no new limit 10 s after a collection: the governor does not follow the heap")
		}
		time.Sleep(5 * time.Millisecond)
	}
	limit, _ := g.Limit()
	live := int64(len(held)) * 64 << 10
	if limit < 2*live || limit > 2*live+live/2+64<<20 {
		t.Errorf("limit %d MiB after a collection holding %d MiB, want about twice that", limit>>20, live>>20)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("runtime's memory limit %d, want the governor's %d", got, limit)
	}
	runtime.KeepAlive(held)
}

func TestGovernor_StopGivesThePacingBack(t *testing.T) {
	g := Start(noEnv, quiet())
	if g == nil {
		t.Fatal("Start governed nothing")
	}
	g.Stop()
	g.Stop() // twice is harmless
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC = %d after Stop, want 100", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d after Stop, want none", l)
	}
	// A collection after Stop sets no limit again.
	runtime.GC()
	runtime.GC()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d set after Stop", l)
	}
	var nilGov *Governor
	nilGov.Stop()
}

func TestGovernor_LeavesTheOperatorsChoice(t *testing.T) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		env := func(k string) (string, bool) { return "200", k == name }
		if g := Start(env, quiet()); g != nil {
			g.Stop()
			t.Errorf("with %s set, Start governed", name)
		}
		if p := gcPercent(); p != 100 {
			t.Errorf("with %s set, GOGC became %d", name, p)
		}
	}
	// One governor per process: a second Start finds the first's settings.
	g := Start(noEnv, quiet())
	if g == nil {
		t.Fatal("Start governed nothing")
	}
	defer g.Stop()
	if g2 := Start(noEnv, quiet()); g2 != nil {
		g2.Stop()
		t.Error("a second Start governed too")
	}
	if p := gcPercent(); p != -1 {
		t.Errorf("GOGC = %d after a second Start, want the first governor's off", p)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	prev := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(prev)
	if g3 := Start(noEnv, quiet()); g3 != nil { // GOGC already off, no limit
		g3.Stop()
		t.Error("Start governed with GOGC already off")
	}
}
