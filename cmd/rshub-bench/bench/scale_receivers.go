package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// scaleReceivers are the loopback callback servers of the scale scenario:
// subscription i's callback is /s/<i> on server i % len(servers), and
// belongs to channel i / perChan. Each POST is checked against the
// channel its notification was published to.
type scaleReceivers struct {
	perChan int
	loopbackServers
	current atomic.Pointer[scaleRound]
}

// scaleRound is one measurement: which channel each notification id of
// [base, base+len(chans)) went to, and the receipts, receiver being the
// subscription's index within its channel.
type scaleRound struct {
	rc    *receipts
	base  int
	chans []int
	wrong atomic.Int64 // deliveries to a subscription of another channel
}

func startScaleReceivers(servers, perChan int) (*scaleReceivers, error) {
	r := &scaleReceivers{perChan: perChan}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /s/{i}", r.receive)
	var err error
	if r.loopbackServers, err = serveLoopback(servers, mux, "scale callback server"); err != nil {
		return nil, err
	}
	return r, nil
}

// url is subscription i's callback URL.
func (r *scaleReceivers) url(i int) string {
	return r.on(i, "/s/"+strconv.Itoa(i))
}

func (r *scaleReceivers) receive(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	now := time.Now()
	w.WriteHeader(http.StatusNoContent)
	i, ierr := strconv.Atoi(req.PathValue("i"))
	id, sent, ok := parseMark(body)
	round := r.current.Load()
	if err != nil || ierr != nil || !ok || round == nil {
		return // a missing receipt shows up as an incomplete measurement
	}
	if k := id - round.base; k >= 0 && k < len(round.chans) && round.chans[k] != i/r.perChan {
		round.wrong.Add(1)
		return
	}
	round.rc.record(i%r.perChan, id, sent, now)
}

// measure publishes notification ids base.. to the channels chans (one
// each) with publish, interval apart (back to back when 0, by workers
// goroutines), and waits up to limit for every subscription of those
// channels to receive its notification.
func (r *scaleReceivers) measure(ctx context.Context, base int, chans []int, interval time.Duration, workers int, limit time.Duration,
	publish func(ctx context.Context, ch, id int) (time.Time, error)) (tally, time.Time, error) {
	round := &scaleRound{rc: newReceipts(r.perChan, base, len(chans)), base: base, chans: chans}
	r.current.Store(round)
	defer r.current.Store(nil)
	var first time.Time
	send := func(ctx context.Context, k int) error {
		sent, err := publish(ctx, chans[k], base+k)
		if k == 0 {
			first = sent
		}
		return err
	}
	var err error
	if interval > 0 || workers <= 1 {
		err = schedule(ctx, len(chans), interval, func(k int) error { return send(ctx, k) })
	} else {
		// Distinct channels only: each channel's notifications stay in order.
		err = parallelN(ctx, workers, len(chans), send)
	}
	if err != nil {
		return tally{}, first, err
	}
	if err := round.rc.wait(ctx, limit); err != nil {
		return tally{}, first, err
	}
	if n := round.wrong.Load(); n > 0 {
		return tally{}, first, fmt.Errorf("%d deliveries reached a subscription of another channel", n)
	}
	return round.rc.tally(), first, nil
}
