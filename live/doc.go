// Package live is the engine of live sessions: a client opens a session on
// one or more channels (or all of them), the hub replays the log from the
// client's cursor and then follows it live, with no loss and no duplicate
// at the seam. One session type has two writers: a WebSocket connection
// (GET /ws, ServeHTTP; JSON text frames, pings, close codes) and a
// Server-Sent Events response (GET /events, Events; one event per frame,
// whose id is the cursor, keep-alive comments, an end event).
//
//   - Replay: from since (a cursor, with the log's epoch) or since_time (a
//     Source datetime, found by binary search over receipt times), through
//     the shared log cache; a browser's Last-Event-ID takes precedence.
//   - Gaps: records the log no longer holds (retention, quarantine) are
//     announced by a gap frame, during replay and live.
//   - Reset: a cursor the log cannot serve (another epoch, ahead of the log)
//     gets a reset frame, and replay starts at the log's first record.
//   - Filters: prefix and change keep only matching entries of each
//     notification (its window stays; hostile filters are refused with 400).
//   - Coalescing: coalesce=1 replays one channel's backlog as one
//     notification per run (logcache.CoalesceLog).
//   - Slow consumers: each session has a bounded send queue; a session that
//     lets it fill is closed with wire.CloseSlowConsumer and its resume
//     cursor, as every session is at shutdown (CloseGoingAway).
//
// Sessions has the lifecycle of every engine: New, then Run until its
// context ends, when it closes every session with its resume cursor and
// returns once they have all ended. One goroutine (Run's) fans live
// records out, encoded once, to every caught-up session. The protocol is
// described in package wire.
package live
