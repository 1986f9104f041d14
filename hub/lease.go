package hub

import (
	"fmt"
	"strconv"
	"time"
)

// LeasePolicy bounds the leases the hub grants, in seconds.
type LeasePolicy struct {
	Min     int64
	Default int64
	Max     int64
}

// defaultLeasePolicy stays inside ResourceSync's guidance of 300 s to
// 2,678,400 s and uses WebSub's suggested default of ten days.
func defaultLeasePolicy() LeasePolicy {
	return LeasePolicy{Min: 300, Default: 864000, Max: 2678400}
}

// Validate reports an inconsistent policy.
func (p LeasePolicy) Validate() error {
	if p.Min <= 0 || p.Default < p.Min || p.Max < p.Default {
		return fmt.Errorf("lease policy: need 0 < min (%d) <= default (%d) <= max (%d)", p.Min, p.Default, p.Max)
	}
	return nil
}

// Grant returns the lease granted for a requested hub.lease_seconds value
// ("" when absent): the default when absent, the request clamped to
// [Min, Max] otherwise. A value that is not a positive decimal integer is an
// error.
func (p LeasePolicy) Grant(requested string) (int64, error) {
	if requested == "" {
		return p.Default, nil
	}
	n, err := strconv.ParseInt(requested, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("hub.lease_seconds must be a positive decimal integer, got %q", requested)
	}
	return min(max(n, p.Min), p.Max), nil
}

// Expiry returns when a lease of seconds granted at t ends.
func Expiry(t time.Time, seconds int64) time.Time {
	return t.Add(time.Duration(seconds) * time.Second)
}
