package server

import (
	"time"

	"github.com/rshub/rshub/hub"
)

// observers fans the hub's events out to several observers, in order.
type observers []hub.Observer

func (o observers) Published(channel string, bytes int, took time.Duration) {
	for _, x := range o {
		x.Published(channel, bytes, took)
	}
}

func (o observers) Rejected(reason string) {
	for _, x := range o {
		x.Rejected(reason)
	}
}

func (o observers) Verified(mode string, ok bool) {
	for _, x := range o {
		x.Verified(mode, ok)
	}
}

func (o observers) GapRecorded(channel string) {
	for _, x := range o {
		x.GapRecorded(channel)
	}
}

func (o observers) Unstored(mode string) {
	for _, x := range o {
		x.Unstored(mode)
	}
}
