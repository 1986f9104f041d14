// Package wire is the protocol between an rshub hub and its clients, in
// one place: what a Source sends, what each transport delivers, the names
// of the NATS stream, subjects and headers, the WebSocket frames and close
// codes, the signature of a webhook delivery, and the paths of the
// pull-mode documents. The hub and every client import it; it imports only
// the standard library. This comment is the protocol on one page.
//
// # Records
//
// The hub stores each notification as a Record: the body exactly as
// published and its metadata (topic, channel name, ResourceSync from and
// until, content type, the rel="resourcesync" link, receipt time, the
// idempotency key, the number of <url> entries). The log sequence Seq,
// shared by all channels and increasing, is every client's cursor.
//
// # Publishing
//
// A Source POSTs a change-notification payload to the hub URL with a Link
// header (HeaderLink; ParseLinks, FormatLinks, NotificationLinks) naming
// the topic (RelSelf) and the hub (RelHub), and optionally its Capability
// List (RelResourceSync). The hub answers 200 once its log holds the
// notification, with the log sequence in HeaderSeq ("Rshub-Seq").
//
// Topics and callbacks are URLs, not bytes: the hub keeps and compares
// each in the spelling NormalizeURL gives it (RFC 3986 §6.2.2, as WebSub
// §5.1.1 asks), so "…/topic/%7Ealice" and "…/topic/~alice", or
// "HTTP://HOST:80/x" and "http://host/x", name one channel, and a
// callback is delivered to and unsubscribed in its normal spelling.
//
// # Webhooks (WebSub)
//
// Each notification arrives at a subscription's callback as a POST of the
// stored body with the topic's Content-Type, one Link header
// (NotificationLinks: self, hub, and resourcesync when known), HeaderSeq
// with the log sequence and, when subscribed with a hub.secret,
// HeaderSignature ("X-Hub-Signature: <method>=<hex>").
//
// Sign and Verify are the one contract of the signature, the one a WebSub
// subscriber expects (WebSub §8): the method is sha1, sha256, sha384 or
// sha512, in any case (Sign writes it in lower case; "" means
// DefaultSigMethod); the value is the lower-case hex HMAC of the body under
// the secret. Verify ignores white space around the value, accepts hex in
// any case, and compares in constant time; it returns ErrNotSigned for an
// empty value and an error wrapping ErrSignatureMismatch for anything else
// that is not a valid signature. A subscriber ignores (and answers 2xx to)
// a delivery that fails verification.
//
// With ParamSignatureScheme (rshub.signature=standard or both), or the
// hub's default scheme, deliveries carry the Standard Webhooks headers
// instead of or beside X-Hub-Signature (SignStandard, VerifyStandard):
// webhook-id stable per subscription and sequence and unique across logs
// ("msg_<subscription>_<epoch>-<seq>", StandardMessageID), webhook-timestamp of the
// attempt, webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>".
//
// Coalesced catch-up (ParamCoalesce, and the hub's threshold): a
// subscription far behind receives each run of consecutive change
// notifications as one notification covering the run's window with the net
// change per resource. HeaderSeq is then the run's last sequence: every
// record up to it is covered, so it is a resume point on any transport.
//
// A subscription whose hub.topic is a channel's feed URL (FeedPath)
// receives each change notification as an Atom Feed Document of its entries
// (application/atom+xml), with Link self = the feed URL; other content of
// the channel is not delivered to it.
//
// # NATS
//
// Every stored notification is one message of the JetStream stream Stream
// ("RSHUB" by default) on the subject
//
//	<prefix>.<channel name>        for example rshub.notify.arxiv
//
// (Subject; the prefix defaults to SubjectPrefix, "rshub.notify"). The
// stream captures "<prefix>.>" (Subject(prefix, "")), so a channel name is
// a subject token, and SubjectChannel reads it back. The stream sequence is
// the hub's log sequence; the stream's metadata holds the log's epoch under
// MetadataEpoch (see Cursors). A message whose headers are not what
// EncodeRecord writes (one published past the hub, or damaged) can never be
// decoded: the hub quarantines it, every reader skips it as it skips a
// record removed by retention, and the operator finds it counted and
// listed (rshub_log_quarantined_total, GET /admin/quarantine).
//
// The message body is the notification exactly as stored. Headers carry
// the metadata (EncodeRecord, DecodeRecord):
//
//	Nats-Msg-Id         idempotency key; JetStream drops a repeat inside the
//	                    stream's duplicate window (default 10 minutes)
//	Rshub-Topic         topic URI of the channel
//	Rshub-Channel       channel name (the last part of the subject)
//	Rshub-From          ResourceSync "from" of the notification, RFC 3339
//	                    with nanoseconds; absent when unknown
//	Rshub-Until         ResourceSync "until", same format; absent when unknown
//	Content-Type        media type of the body
//	Rshub-Received      when the hub accepted it, RFC 3339 with nanoseconds
//	Rshub-Resourcesync  the rel="resourcesync" link the Source sent, if any
//	Rshub-Entries       number of <url> entries of a ResourceSync
//	                    notification, decimal; absent when 0 or unknown
//	Rshub-Private       "1" when the channel was private when it was stored
//	traceparent         the W3C trace context of the notification's intake
//	tracestate          (HeaderTraceParent, HeaderTraceState); absent when none
//
// The trace context comes from the publish request's traceparent and
// tracestate headers (a fat or a thin ping; a followed Source's poll starts
// its own trace). Only a well-formed one is kept (CleanTrace: a version-00
// traceparent; a tracestate of at most 32 members in MaxTraceState bytes);
// a malformed one is dropped, never stored. Every webhook delivery carries
// it as traceparent and tracestate headers (the delivery attempt's own span
// when the hub exports traces), every notification frame as its
// traceparent and tracestate fields, whether or not the hub exports traces.
//
// A value of Nats-Msg-Id, Rshub-Topic, Rshub-Channel, Content-Type or
// Rshub-Resourcesync that is not printable ASCII without leading or
// trailing spaces (it holds CR, LF, NUL or another control character,
// non-ASCII text or invalid UTF-8), or that starts with "=?", is sent as an
// RFC 2047 encoded word: "=?UTF-8?B?", the standard base64 of the value's
// bytes, "?=" (EncodeHeaderValue; DecodeHeaderValue reverses it). Plain
// values, the usual case, are sent as they are. No value can inject a
// header line or end the header block, and none is altered by a client's
// sanitising. Each of those values is at most MaxHeaderValue (8 KiB) bytes
// (CheckRecord; the hub refuses a longer one), which keeps a message's
// headers below JetStream's 64 KiB limit.
//
// Consume live with core NATS (no acknowledgement, no replay):
//
//	nc.Subscribe(wire.Subject("", "arxiv"), func(m *nats.Msg) { ... })
//
// Replay from a log sequence or a time, then follow, with a JetStream
// ordered consumer:
//
//	js, _ := jetstream.New(nc)
//	c, _ := js.OrderedConsumer(ctx, wire.Stream, jetstream.OrderedConsumerConfig{
//		FilterSubjects: []string{wire.Subject("", "arxiv")},
//		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
//		OptStartSeq:    cursor + 1,
//	})
//	c.Consume(func(m jetstream.Msg) {
//		md, _ := m.Metadata()
//		rec, err := wire.DecodeRecord(m.Subject(), wire.Header(m.Headers()), m.Data(), md.Sequence.Stream)
//		...
//	})
//
// Use DeliverByStartTimePolicy with OptStartTime to start from a receipt
// time instead. Records older than the stream's MaxAge or beyond its
// MaxBytes are removed; a consumer starting before the first held sequence
// begins at the first one, so compare sequences to detect the gap.
//
// # WebSockets
//
// The hub serves WebSocket sessions at PathWebSocket ("/ws"). A session
// replays the log from a cursor, says when it has caught up, then delivers
// live notifications, with no loss and no duplicate between replay and
// live. Clients send nothing but control frames; every data frame from the
// hub is one JSON object (text frame) with a "type".
//
// A session opens with (Session, WebSocketURL)
//
//	GET /ws?channels=arxiv,dbpedia&since=1234&raw=1&token=...
//
// and these query parameters, each given at most once:
//
//	channels    required. Comma-separated channel names (1 to 64 of
//	            A-Z a-z 0-9 _ - each, at most MaxSessionChannels names), or
//	            "*" (AllChannels) for every channel.
//	since       optional cursor (Cursor): deliver records with seq > since.
//	            "<epoch>-<seq>" as the hub's ids give it, or a bare "<seq>".
//	since_time  optional, RFC 3339: deliver records whose Source until is
//	            after it (records without an until are compared by their
//	            receipt time). Not together with since.
//	raw         "1" adds the stored body: xml for XML notifications, body
//	            for other content.
//	prefix      repeatable, and change, comma-separated: keep only the
//	            matching entries (see Filters).
//	coalesce    "1", with exactly one channel and since or since_time:
//	            the backlog up to the log's end when the session starts
//	            comes as coalesced notifications (net change per resource,
//	            seq the run's last sequence), then live ones one by one.
//	token       the hub's WebSocket token when one is configured;
//	            "Authorization: Bearer <token>" works too.
//
// Without since and since_time the session starts at the log's last
// sequence: live only. Refusals happen before the upgrade, as plain HTTP:
// 403 origin not allowed (by default the Origin must name the hub's own
// host; the operator may list origins or allow "*"; a request without
// Origin is not from a browser and passes), 401 missing or wrong token, 400
// bad query (the plain-text body says which parameter and why, quoting at
// most 256 bytes of the value), 503 the hub is shutting down.
//
// # Cursors and the log's epoch
//
// The log has an identity, its epoch (MetadataEpoch): a random id given to
// the log's stream when it is created, kept across restarts, new when the
// log is rebuilt (a fresh data directory, a deleted stream). Every cursor
// the hub hands out names it: the id of a notification or live frame, the
// id of a Server-Sent Event, a webhook's webhook-id. The text of a cursor
// (Cursor) is "<epoch>-<seq>"; since= and Last-Event-ID take it back, and
// still take a bare "<seq>" (the format from before epochs), which the hub
// checks on the sequence alone. Anything else is a 400.
//
// A cursor the log cannot serve gets a reset frame (Reset) first, never a
// silent start: a cursor ahead of the log's last sequence (since=5000 on a
// log ending at 3; the hub first waits half a second for it to come within
// the log, as a cursor another hub of a cluster has just handed out does),
// or one whose epoch is not the log's (the log was
// rebuilt: its sequences repeat with other content).
//
//	{"type":"reset","epoch":"9f86d081884c7d65","first_seq":1,"last_seq":3,"since":0,"id":"9f86d081884c7d65-0",
//	 "message":"the cursor 5000 is ahead of the log's last sequence 3; replay starts after 9f86d081884c7d65-0, at the log's first record"}
//
// The session then goes on from the log's first record (every record it
// holds, then the live frame), resuming after since; id is that cursor. It
// starts there rather than at the log's end because nothing the client
// holds belongs to this log: a mirror must see everything the new log
// holds to stay complete, and a dashboard clears its view and shows the
// history a new visitor sees. A Server-Sent Events session sends the same
// frame as a reset event (EventReset) with that id, so an EventSource,
// which cannot read a 4xx answer, reconnects from the new cursor by itself.
//
// The frames are Notification, Gap, Live and Reset (a client reads any with
// DecodeFrame). A notification frame:
//
//	{"type":"notification","channel":"arxiv","topic":"https://example.org/changelist.xml","seq":1235,
//	 "from":"2024-01-01T00:00:00Z","until":"2024-01-01T00:01:00Z","content_type":"application/xml",
//	 "received":"2024-01-01T00:01:02.123456789Z",
//	 "entries":[{"loc":"https://example.org/res1","change":"updated","datetime":"2024-01-01T00:00:30Z",
//	             "lastmod":"2024-01-01T00:00:30Z","hash":"md5:…","length":12,"type":"text/plain"}],
//	 "xml":"<urlset …>…</urlset>"}
//
// In it:
//
//   - seq is the log sequence: the cursor to resume from. Sequences
//     increase; they are shared by all channels, so a session on some
//     channels sees gaps in seq that are not missing data. id is the same
//     cursor with the log's epoch ("<epoch>-<seq>"), the one to resume
//     from; absent when the log has no epoch.
//   - from, until, received are RFC 3339 in UTC (FrameTime), absent when
//     unknown. from and until are Source datetimes; received is when the
//     hub accepted the notification.
//   - entries are the <url> entries of a ResourceSync body (any XML media
//     type), parsed leniently; datetime and lastmod keep the Source's
//     lexical form; change, hash, length and type come from the entry's
//     rs:md and are absent when it lacks them. For other content entries
//     is [].
//   - When an XML body cannot be parsed, entries is [] and error says why;
//     the frame is still sent.
//   - xml (XML content) or body (other content, as text; bytes that are not
//     UTF-8 become U+FFFD) only with raw=1.
//   - traceparent and tracestate, the notification's W3C trace context (see
//     NATS), absent when it has none.
//
// A gap frame:
//
//	{"type":"gap","missing_from_seq":1,"missing_to_seq":4711,"message":"since=0 is older than the log's retention: replay starts at 4712"}
//
// The hub cannot deliver the sequences missing_from_seq..missing_to_seq
// (inclusive): the log removed them by retention, or they are messages it
// quarantined because they never decode (see NATS). A gap frame comes before
// the records that follow the gap, never silently: at the start of a
// session, when since+1 is before the first sequence the log holds; at the
// start of a session with since_time, when the log no longer holds its
// oldest records and the time falls before what it holds (missing_from_seq
// is then 1: the hub cannot tell which of the removed records were after
// the time); during replay or live delivery, if retention removes records
// before they were sent (a session whose channels had no record in that
// window may still get the frame). A destination that gets a gap frame
// recovers the window from the Source (its Change Lists or Resource List)
// and carries on with the frames that follow.
//
// A live frame:
//
//	{"type":"live","seq":5000,"id":"9f86d081884c7d65-5000"}
//
// It is sent once, when replay has caught up: every record up to seq that the
// session asked for has been sent, and every later frame is live. With no
// cursor it is the first frame.
//
// One loop per session reads the log through the hub's shared in-memory
// tail: a cursor inside the tail costs no request to NATS; an older cursor
// reads JetStream, one request per record of the session's channel (one
// channel) or per record of all channels ("*" or several channels, filtered
// by the hub). When caught up the session joins a single hub-wide fan-out
// that encodes each new record once per variant (with or without raw) and
// queues it to every live session. since_time is resolved by a binary
// search over the log's receipt times, starting 10 minutes before the time
// to allow for a Source clock ahead of the hub's, then replays from there,
// dropping records whose until is not after the time.
//
// Clients send control frames only: pongs (answering the hub's pings),
// pings (the hub answers them) and a close frame. The protocol defines no
// client message, so any data message closes the session (other sessions
// are not affected): a binary message or text that is not JSON with
// CloseUnsupportedData (1003), JSON text with ClosePolicyViolation (1008),
// text over MaxClientMessage (512) bytes with CloseMessageTooBig (1009).
// The hub pings every 30 seconds by default; a client that sends no pong
// within twice that is disconnected (browsers and WebSocket libraries
// answer pings by themselves). Each session has a bounded send queue of
// live frames (256 by default).
//
// A session replaying from the log when the log cannot be read (a lost
// connection, a restarting NATS server) stays open: it retries with
// backoff, answering pings meanwhile, and goes on from where it was, with
// no loss and no duplicate. Live sessions simply receive nothing until the
// log comes back, then everything appended meanwhile, in order.
//
// Close codes and reasons:
//
//	4008 CloseSlowConsumer     the session's send queue filled up   "slow consumer; resume with since=<N>"
//	1001 CloseGoingAway        the hub is shutting down             "hub shutting down; resume with since=<N>"
//	4401 CloseTokenExpired     the token that admitted the session  "token expired; resume with since=<N> and a new token"
//	                           to a private channel expired
//	1011 CloseInternalError    replay failed (not the log being     "replay failed; resume with since=<N>"
//	                           unavailable)
//	1003 CloseUnsupportedData  binary, or text that is not JSON     "binary messages are not accepted; …" / "text message is not JSON; …"
//	1008 ClosePolicyViolation  a JSON message                       "unknown message: clients send only control frames; …"
//	1009 CloseMessageTooBig    text over 512 bytes                  "message over 512 bytes; resume with since=<N>"
//
// N is the last sequence the session was told about (the last notification
// sent, or the live frame's seq): reconnecting with since=N continues
// without loss or duplicate.
//
// # Filters
//
// A WebSocket or Server-Sent Events session may keep only some entries of
// each notification with the query parameters ParamPrefix ("prefix",
// repeatable: entries whose loc starts with one of them) and ParamChange
// ("change", comma-separated created, updated, deleted), both at once
// meaning both must hold; at most 32 prefixes of 2048 bytes each, and an
// unknown change type is a 400. A filtered notification frame carries only
// the matching entries, with the notification's original from and until,
// so a destination's continuity check still holds; with raw=1 its xml is
// the filtered document. A notification with no matching entry is still
// sent, with entries [], so the session's cursors stay contiguous. Frames
// other than notifications are not filtered.
//
// # Server-Sent Events
//
// The same sessions are served as Server-Sent Events at PathEvents
// ("/events"), for browsers' EventSource and for networks that do not
// pass WebSockets (EventsURL):
//
//	GET /events?channels=arxiv&since=1234&prefix=https://example.org/a/&token=...
//
// with the query parameters of /ws, the same origin and token rules (the
// token in the query: EventSource cannot send headers) and the same
// refusals as plain HTTP before the stream starts (403, 401, 400, 503; 405
// for a method other than GET and OPTIONS, which answers a CORS preflight
// from an allowed origin). The Last-Event-ID header (HeaderLastEventID), which
// an EventSource sends when it reconnects, is read as since and takes
// precedence over since and since_time in the query, so a reconnection
// with the original URL resumes where the last one ended.
//
// The response is 200 with Content-Type text/event-stream
// (ContentTypeEventStream), Cache-Control "private, no-cache" and X-Accel-Buffering
// no (proxies pass each event on at once), with an Access-Control-Allow-Origin
// naming the request's Origin when there is one. It starts with
// "retry: 2000" (EventsRetry); then every frame of a WebSocket session is
// one event, flushed as it is written:
//
//	event: notification
//	id: 9f86d081884c7d65-1235
//	data: {"type":"notification","channel":"arxiv","seq":1235,...}
//
// The event type is the frame's type (EventNotification, EventGap,
// EventLive, EventReset), the data line the same JSON as the WebSocket
// frame, and id the cursor (Cursor, with the log's epoch) the client holds
// once it has the event: the seq of a notification and of a live frame,
// missing_to_seq of a gap, since of a reset. Replay, the
// live seam (no loss, no duplicate), gap events and the bounded queue of
// live events are those of WebSocket sessions: both kinds share one
// fan-out. A comment line (EventsKeepAlive) is sent every ping interval.
// The stream carries no hop-by-hop header and works over HTTP/1.1 and
// HTTP/2 and through ordinary reverse proxies.
//
// When the hub ends a stream it first sends an end event (End):
//
//	event: end
//	data: {"type":"end","code":4008,"reason":"slow consumer; resume with since=1300","since":1300}
//
// with the WebSocket close code and reason of the same case: 4008 the
// session's queue of live events filled up (a client too slow to read),
// 1001 the hub is shutting down, 1011 replay failed, 4401 the token that
// admitted the session to a private channel expired. The end event has no
// id; since is the sequence of the last event with one. An EventSource then
// reconnects by itself after the retry delay with that Last-Event-ID and
// loses nothing; other clients reconnect with since=<since>.
//
// # Framework Notifications
//
// Every channel <name> has a companion framework channel
// FrameworkChannel(name), "<name>-framework" (ResourceSync Framework
// Notification 1.0.1, RSF-1), hosted by the hub at FrameworkTopicPath(name),
// /topics/<name>-framework, and advertised in the channel's Capability List
// as a <url> with capability CapFrameworkNotification and rs:ln rel="hub".
// It is a channel like any other: records in the log under its own name, a
// NATS subject, a WebSocket and Server-Sent Events channel, a WebSub topic,
// each with its own cursor; GET on its topic answers the latest framework
// notification. Only the payload differs: a <urlset> whose root rs:md has
// capability="framework-notification" and optional from/until (RSF-2); each
// <url> names a changed capability document with change and capability
// (RSF-3), never an index document, but rs:ln rel="index" to the index the
// document sits under (RSF-4); the change types allowed per document type
// are those of RSF-5; several changes may share one notification (RSF-6).
//
// The hub announces its own capability documents there. In pull mode each
// Change List rotation gives exactly one notification, across restarts and
// hub processes (its bytes, hence its idempotency key, depend only on the
// list's identity): the closed list updated, with its until as datetime;
// the new open list created; the Change List Archive, or its current page,
// created or updated; and at a channel's first rotation its Capability List
// updated. A destination that reads an updated changelist entry knows every
// change up to that datetime is in the hub's Change Lists: client/mirror
// heals from them at once when its position is behind it.
//
// When a channel is added, its framework channel announces its Capability
// List created and the Source Description updated, and every channel that
// existed before announces the Source Description updated; when a channel
// is removed, every remaining framework channel announces that Capability
// List deleted and the Source Description updated. Each once, across
// restarts and hub processes (the key is derived from the change), for
// changes within the pull package's FrameworkHorizon.
//
// A Source may publish its own framework notifications (a fat ping to the
// framework topic, for example when its Resource List changes), with the
// channel's publisher trust; the hub validates them strictly (the rules
// above) and refuses change notifications there, as it refuses framework
// notifications on the change topic (RSN-3).
//
// # Pull mode
//
// The same history is served as ResourceSync documents at the hub's origin
// (paths built by the *Path functions, routed with the Pattern* constants,
// read back with ParsePath); {name} is a channel name, {seq} the log
// sequence of a list's first notification and {k} an archive page, both
// zero-padded to 20 digits (ListFile: "00000000000000000042.xml") so that
// a channel's list URLs sort in chronological order. The unpadded names of
// earlier hubs ("42.xml", ParseLegacyListFile) answer 301 with the padded
// name:
//
//	/.well-known/resourcesync                     Source Description: every channel's Capability List
//	/robots.txt                                    a Sitemap line for the Source Description and each Capability List
//	/channels/{name}/capabilitylist.xml            Capability List
//	/channels/{name}/changelist.xml                the open Change List (alias)
//	/channels/{name}/changelist/{seq}.xml          a Change List, open or closed (stable name)
//	/channels/{name}/changelist-index.xml          Change List Index
//	/channels/{name}/changelist-archive.xml        Change List Archive, or its Archive Index when paged
//	/channels/{name}/changelist-archive/{k}.xml    archive page k (1-based)
//	/topics/{name}                                 topic URI of a channel the hub hosts
//	/ws                                            WebSocket sessions
//	/events                                        Server-Sent Events sessions
//
// A Capability List lists changelist, changelist-archive and the
// change-notification channel (its topic URI, with rs:ln rel="hub").
//
// A channel may name a dataset description (its describedBy: a document,
// VoID-style RDF for example, describing the dataset the channel
// publishes). The channel's Capability List root and its entry in the
// Source Description then carry rs:ln rel="describedby" to it; without one
// neither has a describedby link.
//
// Discovery starts from any of the entry points ResourceSync §12 names:
// the Source Description at PathWellKnown, the Sitemap lines of
// PathRobots, or the Link header every channel document carries:
//
//	Link: <capability list>; rel="resourcesync", <parent>; rel="up", <description>; rel="describedby"
//
// rel="resourcesync" (RelResourceSync) names the channel's Capability List;
// rel="up" (RelUp) the same parent as the document's rs:ln rel="up" (the
// Source Description for a Capability List, the Capability List for the
// rest); rel="describedby" (RelDescribedBy) is there when the channel has
// a dataset description. A hosted topic answers with self, hub,
// resourcesync and, when the channel has one, describedby.
package wire
