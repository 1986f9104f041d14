package embednats

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// The users of a server started with Config.Access.
const (
	// HubUser is the hub's own user: it connects in process only and may
	// do everything (it is the log's only writer).
	HubUser = "rshub-hub"
	// LeafUser is the user edge hubs' servers link as to a server's leaf
	// listener, with LeafPermissions.
	LeafUser = "rshub-edge"
	// DefaultReadUser is the name of the read user when Access.ReadUser is
	// empty.
	DefaultReadUser = "reader"
)

// Inbox prefixes of the hub's own connection: never _INBOX, which readers
// may subscribe to, so no reader sees the answers the hub is given (its
// key-value store's, which hold subscription secrets). An edge hub's
// answers from its origin cross the leaf link, whose permissions allow
// edgeInbox and not hubInbox.
const (
	hubInbox  = "_RSHUB_HUB"
	edgeInbox = "_RSHUB_EDGE"
)

// Connection types of nats-server's user configuration (jwt's names).
const (
	connInProcess = "IN_PROCESS"
	connStandard  = "STANDARD"
	connWebSocket = "WEBSOCKET"
	connLeaf      = "LEAFNODE"
)

// Access says who may use a server. The hub's own user (HubUser,
// HubPassword) connects in process only and may do everything; a read user
// may read the log (ReadPermissions) over TCP; leaf nodes (edge hubs) link
// as LeafUser (LeafPermissions). Nobody else connects, unless
// AnonymousRead lets connections without credentials read as the read user
// does.
type Access struct {
	// HubPassword is the hub's own user's password; empty: Start makes a
	// random one (Connect presents it).
	HubPassword string
	// Stream and SubjectPrefix are the log's stream and subject prefix,
	// the only ones readers may read.
	Stream, SubjectPrefix string
	// Buckets are the streams of the key-value buckets edges mirror
	// read-only (the channels bucket's, KV_<bucket>), besides the log.
	Buckets []string
	// ReadUser (default DefaultReadUser) and ReadPassword are the read
	// user's credentials; an empty ReadPassword makes no read user.
	ReadUser, ReadPassword string
	// AnonymousRead lets connections without credentials read, as the read
	// user does.
	AnonymousRead bool
	// LeafPassword is LeafUser's password: the one edges present to the
	// leaf listener, and the one this server presents to its leaf remote.
	// Empty: the leaf listener accepts no link.
	LeafPassword string
}

// users returns the server's users and its no-auth user for a.
func (a *Access) users(domain string) ([]*server.User, string, error) {
	if a.HubPassword == "" {
		pw, err := randomPassword()
		if err != nil {
			return nil, "", err
		}
		a.HubPassword = pw
	}
	if a.Stream == "" || a.SubjectPrefix == "" {
		return nil, "", errors.New("embednats: Access needs the log's Stream and SubjectPrefix")
	}
	users := []*server.User{{Username: HubUser, Password: a.HubPassword, AllowedConnectionTypes: types(connInProcess)}}
	readUser := a.ReadUser
	if readUser == "" {
		readUser = DefaultReadUser
	}
	readPassword := a.ReadPassword
	if readPassword == "" && a.AnonymousRead {
		pw, err := randomPassword() // a user no one knows the password of, for anonymous readers
		if err != nil {
			return nil, "", err
		}
		readPassword = pw
	}
	noAuth := ""
	if readPassword != "" {
		users = append(users, &server.User{Username: readUser, Password: readPassword,
			Permissions: ReadPermissions(a.Stream, a.SubjectPrefix, domain), AllowedConnectionTypes: types(connStandard, connWebSocket)})
		if a.AnonymousRead {
			noAuth = readUser
		}
	}
	if a.LeafPassword != "" {
		users = append(users, &server.User{Username: LeafUser, Password: a.LeafPassword,
			Permissions: LeafPermissions(a.Stream, a.SubjectPrefix, domain, a.Buckets), AllowedConnectionTypes: types(connLeaf)})
	}
	return users, noAuth, nil
}

// HubInbox is the inbox option of the hub's own connections (edge: an
// edge hub's), on the embedded server and on an external one alike.
func HubInbox(edge bool) nats.Option {
	if edge {
		return nats.CustomInboxPrefix(edgeInbox)
	}
	return nats.CustomInboxPrefix(hubInbox)
}

// withLeafUser returns u carrying LeafUser's credentials.
func withLeafUser(u *url.URL, password string) *url.URL {
	c := *u
	c.User = url.UserPassword(LeafUser, password)
	return &c
}

func types(t ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(t))
	for _, s := range t {
		m[s] = struct{}{}
	}
	return m
}

// randomPassword returns 32 random hex digits.
func randomPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// accessOptions sets cfg.Access's users on opts, and the hub user's
// credentials on the leaf remote, and returns the options of the hub
// user's connections.
func accessOptions(opts *server.Options, cfg Config) ([]nats.Option, error) {
	a := cfg.Access
	if a == nil {
		return nil, nil
	}
	users, noAuth, err := a.users(cfg.Domain)
	if err != nil {
		return nil, err
	}
	opts.Users, opts.NoAuthUser = users, noAuth
	for _, r := range opts.LeafNode.Remotes {
		if a.LeafPassword == "" {
			break
		}
		for i, u := range r.URLs {
			if u.User == nil { // a URL naming its own user keeps it
				r.URLs[i] = withLeafUser(u, a.LeafPassword)
			}
		}
	}
	return []nats.Option{nats.UserInfo(HubUser, a.HubPassword), HubInbox(cfg.LeafRemote != "")}, nil
}
