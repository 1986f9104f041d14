package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/rshub/rshub/access"
)

// verifiers makes the verifiers of private channels' subscriber and
// publisher tokens (--subscriber-jwt-key, --subscriber-jwks-url,
// --publisher-jwt-key, --publisher-jwks-url); a role without a key gets
// nil, which verifies no token. Both read access tokens of the current
// Mercure draft by rules (--mercure-audience, --mercure-issuer) on every
// face, as the Mercure face does. Key sets are read through the guarded
// client given (the process's guarded one), so a JWKS URL on a private
// network must be in --allow-networks; Check makes them once with no key
// set read, to refuse a bad key before anything starts. failed, when not
// nil, gives each role the function told its key set's failed reads.
func (s Config) verifiers(client *http.Client, failed func(role string) func(error), rules access.AccessRules) (subscribers, publishers *access.Verifier, err error) {
	report := func(role string) func(error) {
		if failed == nil {
			return nil
		}
		return failed(role)
	}
	subscribers, err = access.New(access.Config{Key: s.SubscriberJWTKey, JWKSURL: s.SubscriberJWKSURL, Client: client, OnKeySetError: report("subscriber"),
		Audience: s.SubscriberJWTAudience, Issuer: s.SubscriberJWTIssuer, Access: rules})
	if err != nil {
		return nil, nil, fmt.Errorf("--subscriber-jwt-key/--subscriber-jwks-url: %w", err)
	}
	publishers, err = access.New(access.Config{Key: s.PublisherJWTKey, JWKSURL: s.PublisherJWKSURL, Client: client, OnKeySetError: report("publisher"),
		Audience: s.PublisherJWTAudience, Issuer: s.PublisherJWTIssuer, Access: rules})
	if err != nil {
		return nil, nil, fmt.Errorf("--publisher-jwt-key/--publisher-jwks-url: %w", err)
	}
	return subscribers, publishers, nil
}

// keySetLogEvery is the least time between two WARN lines about one
// role's key set.
const keySetLogEvery = time.Minute

// keySetFailures counts failed key set reads (rshub_jwks_failures_total)
// and logs them at WARN, at most once per keySetLogEvery and role, saying
// how many were not logged meanwhile.
type keySetFailures struct {
	count  func(role string)
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	logged  map[string]time.Time
	skipped map[string]int
}

func newKeySetFailures(count func(string), logger *slog.Logger) *keySetFailures {
	return &keySetFailures{count: count, logger: logger, now: time.Now, logged: map[string]time.Time{}, skipped: map[string]int{}}
}

// reporter returns the function told role's failed reads.
func (k *keySetFailures) reporter(role string) func(error) {
	return func(err error) {
		k.count(role)
		k.mu.Lock()
		now := k.now()
		if last, ok := k.logged[role]; ok && now.Sub(last) < keySetLogEvery {
			k.skipped[role]++
			k.mu.Unlock()
			return
		}
		skipped := k.skipped[role]
		k.logged[role], k.skipped[role] = now, 0
		k.mu.Unlock()
		k.logger.Warn("the "+role+" key set could not be read: private channels refuse tokens its keys sign until it can", "err", err, "failures_not_logged", skipped)
	}
}

// keySetProbe is the readiness of role's key set: degraded while its reads
// fail (the reason names neither the URL nor the cause: /readyz is public,
// the logs have them).
func keySetProbe(role, flag string, v *access.Verifier) probe {
	return probe{role + " key set", func(ctx context.Context) error {
		if failing, since := v.RecheckKeySet(ctx); failing {
			return degradedError{fmt.Errorf("degraded: the %s key set (%s) unavailable since %s", role, flag, since.UTC().Format(time.RFC3339))}
		}
		return nil
	}}
}
