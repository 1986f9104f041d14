package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// hubReport says, without -v, when the hub cannot be reached (once per
// outage, not per retry) and when it answers again: a Source whose hub is
// not running says so instead of nothing.
type hubReport struct {
	out  io.Writer
	hub  string
	mu   sync.Mutex
	down bool
}

// failed reports a publish or probe that did not reach the hub.
func (r *hubReport) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return
	}
	r.down = true
	what := "failing"
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		what = "unreachable"
	}
	fmt.Fprintf(r.out, "hub %s %s (%v): is it running (go run ./cmd/hub --demo)? "+
		"Changes are kept and published when it answers; retrying\n", r.hub, what, err)
}

// answered reports a publish the hub acknowledged.
func (r *hubReport) answered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		r.down = false
		fmt.Fprintf(r.out, "hub %s answers again\n", r.hub)
	}
}

// probeHub GETs the hub URL once, so that a hub that is not there is named
// at start, before any change is published; any HTTP answer counts as
// there.
func probeHub(ctx context.Context, hub string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hub, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
