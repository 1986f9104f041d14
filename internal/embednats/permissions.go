package embednats

import (
	"github.com/nats-io/nats-server/v2/server"
)

// ReadPermissions are a read user's: subscribe to the log's subjects
// (prefix.>) and to its own _INBOX replies; of the JetStream API, only what
// reading stream, the log, needs: its info, its messages by sequence
// (direct get), and consumers of it (create, info, list, next message,
// acknowledgements, flow control), in the API of the server's domain too
// ($JS.<domain>.API). Everything else is refused: publishing to prefix.>
// or $KV.>, creating, updating, purging or deleting streams, deleting
// messages or consumers, reading any other stream (the key-value buckets).
// The list allows; nothing outside it is denied one by one, so an API
// subject added by a later nats-server is refused until it is listed here.
func ReadPermissions(stream, prefix, domain string) *server.Permissions {
	var pub []string
	for _, api := range apiPrefixes(domain) {
		pub = append(pub, readAPI(api, stream)...)
	}
	pub = append(pub, replies("ACK", stream)...) // acknowledgements of a reader's own consumers
	pub = append(pub, replies("FC", stream)...)  // flow control answers of push consumers
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: []string{prefix + ".>", "_INBOX.>"}},
	}
}

// LeafPermissions are an edge hub's leaf link's, as the edge sees them:
// it may send what its mirrors need, of the log (stream) and of the
// key-value buckets' streams it mirrors read-only (buckets: the channels
// bucket's): each stream's info (the mirror's creation, the log's epoch),
// consumers of it and flow control; and receive the log's subjects, the
// mirrors' deliveries ($JS.M), the API's answers to the mirrors ($JSC.R)
// and to the edge hub itself (its inbox), and the loop detection of leaf
// links ($LDS). It may not write the log or the key-value buckets
// (publish to prefix.> or $KV.>, or their API), nor change or delete a
// stream or consumer, nor receive the origin hub's own answers.
func LeafPermissions(stream, prefix, domain string, buckets []string) *server.Permissions {
	var pub []string
	for _, s := range append([]string{stream}, buckets...) {
		for _, api := range apiPrefixes(domain) {
			pub = append(pub,
				api+".STREAM.INFO."+s,
				api+".CONSUMER.CREATE."+s,
				api+".CONSUMER.CREATE."+s+".>",
				api+".CONSUMER.INFO."+s+".*",
			)
		}
		pub = append(pub, replies("FC", s)...)
	}
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: []string{
			prefix + ".>", "$JS.M.>", "$JSC.R.>", edgeInbox + ".>", "_INBOX.>", "$LDS.>",
		}},
	}
}

// replies are the subjects of a consumer of stream's acknowledgements
// (kind ACK) or flow control answers (FC), in both of the server's formats:
// $JS.<kind>.<stream>.… and $JS.<kind>.<domain>.<account hash>.<stream>.….
func replies(kind, stream string) []string {
	return []string{"$JS." + kind + "." + stream + ".>", "$JS." + kind + ".*.*." + stream + ".>"}
}

// apiPrefixes are the JetStream API's subjects in a server: $JS.API, and
// $JS.<domain>.API when it has a domain.
func apiPrefixes(domain string) []string {
	if domain == "" {
		return []string{"$JS.API"}
	}
	return []string{"$JS.API", "$JS." + domain + ".API"}
}

// readAPI is the JetStream API a reader of stream uses, under api.
func readAPI(api, stream string) []string {
	return []string{
		api + ".INFO",
		api + ".STREAM.NAMES",
		api + ".STREAM.INFO." + stream,
		api + ".STREAM.MSG.GET." + stream,
		api + ".DIRECT.GET." + stream,
		api + ".DIRECT.GET." + stream + ".>",
		api + ".CONSUMER.CREATE." + stream,
		api + ".CONSUMER.CREATE." + stream + ".>",
		api + ".CONSUMER.DURABLE.CREATE." + stream + ".*",
		api + ".CONSUMER.INFO." + stream + ".*",
		api + ".CONSUMER.NAMES." + stream,
		api + ".CONSUMER.LIST." + stream,
		api + ".CONSUMER.MSG.NEXT." + stream + ".*",
	}
}
