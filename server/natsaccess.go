package server

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/wire"
)

// The embedded NATS server's doors. The hub's own connection (in process)
// is the only one that may write the log or the key-value buckets; a
// client on --nats-listen reads, as --nats-user with the password of
// --nats-password-file (or without credentials, with
// --nats-anonymous-read only); an edge's leaf link logs in with the
// password of --leaf-password-file and may read what its mirror needs.
// Nobody else connects. embednats.ReadPermissions and LeafPermissions say
// what reading is; docs/usage.md ("NATS and /metrics") shows an external
// nats-server configured the same way.

// maxPasswordFile bounds a password file.
const maxPasswordFile = 4 << 10

// checkNATSAccess refuses NATS access settings that cannot work.
func (s Config) checkNATSAccess() error {
	embedded := s.NATSURL == ""
	switch {
	case !embedded && (s.NATSPasswordFile != "" || s.NATSAnonymousRead || s.LeafPasswordFile != ""):
		return errors.New("--nats-password-file, --nats-anonymous-read and --leaf-password-file apply to the embedded NATS server; give the external server's users in its own configuration (docs/usage.md, \"NATS and /metrics\")")
	case !embedded:
		return nil
	case s.NATSUser == embednats.HubUser || s.NATSUser == embednats.LeafUser:
		return fmt.Errorf("--nats-user %q is the name of one of the hub's own users: choose another", s.NATSUser)
	case s.NATSUser != "" && strings.ContainsAny(s.NATSUser, " \t\r\n:@/"):
		return fmt.Errorf("--nats-user must be a name without spaces, ':', '@' or '/', got %q", wire.Clip(s.NATSUser))
	case s.LeafListen != "off" && s.LeafPasswordFile == "":
		return errors.New("--leaf-listen needs --leaf-password-file, the password edge hubs present (give the edges the same file)")
	case s.UpstreamLeaf != "" && s.LeafPasswordFile == "" && !leafURLsHaveUser(s.UpstreamLeaf):
		return errors.New("--upstream-leaf needs --leaf-password-file, the password of the origin's --leaf-password-file (or a user in the URL, for an external origin server)")
	}
	return nil
}

// leafURLsHaveUser reports whether every URL of list names a user.
func leafURLsHaveUser(list string) bool {
	for _, s := range strings.Split(list, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.User == nil {
			return false
		}
	}
	return true
}

// natsAccess is the embedded server's Access for s, its passwords read
// from their files.
func (s Config) natsAccess() (*embednats.Access, error) {
	a := &embednats.Access{Stream: wire.Stream, SubjectPrefix: wire.SubjectPrefix, ReadUser: s.NATSUser, AnonymousRead: s.NATSAnonymousRead,
		Buckets: []string{kvstore.ChannelsStream("")}} // an edge mirrors the channels
	var err error
	if a.ReadPassword, err = readPasswordFile("--nats-password-file", s.NATSPasswordFile); err != nil {
		return nil, err
	}
	if a.LeafPassword, err = readPasswordFile("--leaf-password-file", s.LeafPasswordFile); err != nil {
		return nil, err
	}
	return a, nil
}

// readPasswordFile returns the password in path (its first line), "" for
// no path.
func readPasswordFile(flag, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	if len(b) > maxPasswordFile {
		return "", fmt.Errorf("%s %s: longer than %d bytes, not a password file", flag, path, maxPasswordFile)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pw := strings.TrimSpace(line)
	if pw == "" {
		return "", fmt.Errorf("%s %s: the file holds no password (its first line is empty)", flag, path)
	}
	return pw, nil
}

// natsReaders says who may read on --nats-listen, for the start's log.
func (s Config) natsReaders() string {
	switch {
	case s.NATSAnonymousRead:
		return "anyone (--nats-anonymous-read)"
	case s.NATSPasswordFile != "":
		return "user " + s.NATSUser
	}
	return "nobody (give --nats-password-file)"
}
