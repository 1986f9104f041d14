// Package publisher sends ResourceSync change notifications to a hub the
// way ResourceSync Change Notification 1.0.1 §4.2 asks: the notification
// XML as the body of a POST to the hub URL, with Content-Type
// application/xml and one Link header naming the topic (rel="self") and the
// hub (rel="hub").
//
// A Publisher keeps successive notifications contiguous: each one's from
// is the previous one's until (RSN-9), remembered in a State that a Store
// can persist across restarts. A notification is encoded once and its
// exact bytes are kept until the hub acknowledges them, so retries after a
// transport error or a 5xx, and a retry after a crash when the Store is
// durable, send identical bytes that the hub recognises as the same
// notification (its idempotency key is topic + body). A 4xx is not
// retried: it comes back as a *HubError carrying the hub's plain-text
// reason.
package publisher
