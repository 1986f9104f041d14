package server

import (
	"fmt"
	"net/http"

	"github.com/rshub/rshub/access"
)

// verifiers makes the verifiers of private channels' subscriber and
// publisher tokens (--subscriber-jwt-key, --subscriber-jwks-url,
// --publisher-jwt-key, --publisher-jwks-url); a role without a key gets
// nil, which verifies no token. Key sets are read through the guarded
// client given (the process's guarded one), so a JWKS URL on a private
// network must be in --allow-networks; Check makes them once with no key
// set read, to refuse a bad key before anything starts.
func (s Config) verifiers(client *http.Client) (subscribers, publishers *access.Verifier, err error) {
	subscribers, err = access.New(access.Config{Key: s.SubscriberJWTKey, JWKSURL: s.SubscriberJWKSURL, Client: client})
	if err != nil {
		return nil, nil, fmt.Errorf("--subscriber-jwt-key/--subscriber-jwks-url: %w", err)
	}
	publishers, err = access.New(access.Config{Key: s.PublisherJWTKey, JWKSURL: s.PublisherJWKSURL, Client: client})
	if err != nil {
		return nil, nil, fmt.Errorf("--publisher-jwt-key/--publisher-jwks-url: %w", err)
	}
	return subscribers, publishers, nil
}
