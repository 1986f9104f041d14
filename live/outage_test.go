package live_test

import "github.com/rshub/rshub/internal/faultlog"

// outage is the switch that takes these tests' log away (package faultlog,
// which package delivery's tests share).
type outage = faultlog.Outage
