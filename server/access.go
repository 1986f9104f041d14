package server

import (
	"fmt"

	"github.com/rshub/rshub/access"
)

// verifiers makes the verifiers of private channels' subscriber and
// publisher tokens (--subscriber-jwt-key, --subscriber-jwks-url,
// --publisher-jwt-key, --publisher-jwks-url); a role without a key gets
// nil, which verifies no token. Key sets are read through the guarded
// client, so a JWKS URL on a private network must be in --allow-networks.
func (p *process) verifiers() (subscribers, publishers *access.Verifier, err error) {
	subscribers, err = access.New(access.Config{Key: p.cfg.SubscriberJWTKey, JWKSURL: p.cfg.SubscriberJWKSURL, Client: p.client})
	if err != nil {
		return nil, nil, fmt.Errorf("--subscriber-jwt-key/--subscriber-jwks-url: %w", err)
	}
	publishers, err = access.New(access.Config{Key: p.cfg.PublisherJWTKey, JWKSURL: p.cfg.PublisherJWKSURL, Client: p.client})
	if err != nil {
		return nil, nil, fmt.Errorf("--publisher-jwt-key/--publisher-jwks-url: %w", err)
	}
	return subscribers, publishers, nil
}
