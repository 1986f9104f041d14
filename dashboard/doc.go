// Package dashboard serves the hub's browser dashboard: a live feed of
// notifications over the hub's WebSocket endpoint (or, when WebSockets
// cannot connect from the page, its Server-Sent Events endpoint, whose
// EventSource resumes by itself with Last-Event-ID), channels with their
// publish rate, last until and gaps, subscriptions with their delivery
// health and dead letters (with a redrive button each), a dialog per
// subscription with its attempt log (why deliveries fail: status, latency,
// error, the callback's response headers and body start, next attempt;
// filtered by status) and its dead letters to redrive, and a throughput
// chart of the last minutes. Lists are paged as the admin API pages them:
// the page reads one page of channels and of subscriptions (the failing
// ones first) and one more per "Load more", narrows both with a search
// box, and shows the hub's counts from GET /admin/summary, so that it
// stays usable with 100,000 subscriptions. The feed shows change
// notifications; the hub's framework notifications (wire.FrameworkChannel: its Change Lists,
// Capability Lists and Source Description changed) are about documents,
// not resources, and are left out unless the feed's "framework" toggle is
// on; they are never counted as notifications.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary; it
// talks to the hub's admin API with the admin token, which it asks for once
// (or reads from the URL fragment #token=…) and keeps in sessionStorage.
// The only server-side state is Rate, a bounded ring of per-second publish
// counts that gives the chart its history when the page loads.
package dashboard
