package testenv

import (
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

func TestNATS_ConnectionWorks(t *testing.T) {
	_, nc := NATS(t)
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestRedis_AnswersPingOnLoopback(t *testing.T) {
	u := Redis(t)
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(p.Hostname()); ip == nil || !ip.IsLoopback() {
		t.Fatalf("redis URL %s is not on loopback", u)
	}
	if !ping(p.Host) {
		t.Fatalf("no PONG from %s", u)
	}
}

func TestEventually_WaitsForCondition(t *testing.T) {
	var n atomic.Int32
	go func() {
		for n.Load() < 3 {
			n.Add(1)
		}
	}()
	Eventually(t, 5*time.Second, func() bool { return n.Load() >= 3 }, "counter reaching %d", 3)
}

func TestClock_AdvanceMovesNowOnly(t *testing.T) {
	var c Clock
	before := time.Now()
	if got := c.Now(); got.Before(before) || got.Sub(before) > time.Minute {
		t.Fatalf("a new Clock reads %s, want about %s", got, before)
	}
	c.Advance(time.Hour)
	if got := c.Now(); time.Until(got) < 59*time.Minute {
		t.Fatalf("after Advance(1h) the clock reads %s, %s ahead", got, time.Until(got))
	}
}
