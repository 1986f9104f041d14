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
// subscription by URL, never by its Link headers (WebSub §7). A
// subscription made with a secret only accepts deliveries whose
// X-Hub-Signature (sha1, sha256, sha384 or sha512 HMAC of the body) is
// valid; others are answered 2xx and discarded, as WebSub §8 allows.
// Valid deliveries are parsed as ResourceSync documents and handed to the
// OnNotification function.
//
// Discover finds a Source's change-notification channel from its Source
// Description (/.well-known/resourcesync), a Capability List, or the Link
// headers of a topic URL.
package subscriber
