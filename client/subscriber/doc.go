// Package subscriber is the destination side of WebSub for ResourceSync
// change notifications: an http.Handler that serves a destination's
// callbacks, the subscribe, unsubscribe and renewal requests it sends to a
// hub, and the discovery of a Source's hub and topic.
//
// A Handler answers a hub's verification of intent (WebSub §5.3) only for a
// subscribe or unsubscribe it actually asked for and is still waiting on,
// echoing hub.challenge; every other verification gets 404. A denial
// (hub.mode=denied) ends the subscription and is reported. Each
// subscription has its own callback URL (the Handler's base callback with
// a sub=<id> query parameter), so a delivery is matched to its
// subscription by URL, never by its Link headers (WebSub §7).
//
// A subscription made with a secret only accepts signed deliveries, by
// Config.Signatures: X-Hub-Signature (WebSub; sha1, sha256, sha384 or
// sha512 HMAC of the body), or Standard Webhooks (webhook-id,
// webhook-timestamp, webhook-signature; wire.VerifyStandard), whose
// timestamp must be within Config.Tolerance of now in either direction
// and whose webhook-id must not have been taken before for that
// subscription (a bounded replay cache remembers ids for the tolerance
// window; when it is full, deliveries are answered 503 until ids expire).
// X-Hub-Signature has no timestamp or id, so a captured delivery can be
// replayed forever: subscribe with SubscribeOptions.Scheme
// wire.SchemeStandard and set RequireStandard to refuse that. Deliveries
// that fail are answered 2xx and discarded, as WebSub §8 allows, logged,
// and reported to Config.OnDiscard. Valid deliveries are parsed as
// ResourceSync documents and handed to the OnNotification function; one
// whose OnNotification fails is answered 503 and its webhook-id is not
// remembered, so the hub's retry is taken.
//
// SubscribeOptions.Scheme and SubscribeOptions.Filter ask the hub for a
// signature scheme and an entry filter (wire.ParamSignatureScheme,
// wire.ParamFilterPrefix, wire.ParamFilterChange); a hub that does not
// know them ignores them.
//
// Discover finds a Source's change-notification channel from its Source
// Description (/.well-known/resourcesync), a Capability List, or the Link
// headers of a topic URL.
package subscriber
