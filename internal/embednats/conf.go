package embednats

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// AuthorizationConf returns the authorization block of a nats-server
// configuration file that gives an external server (a cluster's nodes)
// the embedded server's users: the hub's own (HubUser, with
// $RSHUB_HUB_PASSWORD, the only one that writes), the read user (readUser,
// $RSHUB_READ_PASSWORD, ReadPermissions) and the edges' leaf links
// (LeafUser, $RSHUB_LEAF_PASSWORD, LeafPermissions). The server reads the
// passwords from its environment. domain is the server's JetStream domain;
// buckets the streams of the key-value buckets edges mirror (Access.Buckets).
func AuthorizationConf(stream, prefix, domain, readUser string, buckets []string) string {
	var b strings.Builder
	b.WriteString("authorization {\n  users: [\n")
	fmt.Fprintf(&b, "    { user: %q, password: $RSHUB_HUB_PASSWORD, allowed_connection_types: [\"STANDARD\"] }\n", HubUser)
	confUser(&b, readUser, "$RSHUB_READ_PASSWORD", []string{connStandard, connWebSocket}, ReadPermissions(stream, prefix, domain))
	confUser(&b, LeafUser, "$RSHUB_LEAF_PASSWORD", []string{connLeaf}, LeafPermissions(stream, prefix, domain, buckets))
	b.WriteString("  ]\n}\n")
	return b.String()
}

func confUser(b *strings.Builder, user, password string, types []string, p *server.Permissions) {
	fmt.Fprintf(b, "    { user: %q, password: %s, allowed_connection_types: %s,\n", user, password, confList(types))
	fmt.Fprintf(b, "      permissions: {\n        publish: { allow: %s }\n        subscribe: { allow: %s } } }\n",
		confLines(p.Publish.Allow), confLines(p.Subscribe.Allow))
}

func confList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// confLines is confList with an item a line.
func confLines(l []string) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, s := range l {
		fmt.Fprintf(&b, "          %q\n", s)
	}
	b.WriteString("        ]")
	return b.String()
}
