package mirror

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// ErrUnsafePath is returned by MapPath for a loc that has no safe place in
// the mirror.
var ErrUnsafePath = errors.New("mirror: loc has no safe path")

// MapPath maps a resource URI to a relative, slash-separated path inside
// the mirror. With a base URL the loc must start with it and the path is
// the rest; without, the path is host/path (a port becomes host_port).
// The path is percent-decoded and must be local: no empty, "." or ".."
// segment, no NUL or backslash, no query or fragment, no trailing slash,
// and no segment that starts like the Mirror's temporary files.
func MapPath(base, loc string) (string, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnsafePath, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrUnsafePath, loc)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("%w: %q has a query or fragment", ErrUnsafePath, loc)
	}
	var rel string
	if base != "" {
		rest, ok := strings.CutPrefix(loc, base)
		if !ok {
			return "", fmt.Errorf("%w: %q is not under %q", ErrUnsafePath, loc, base)
		}
		if !strings.HasSuffix(base, "/") {
			rest, ok = strings.CutPrefix(rest, "/")
			if !ok {
				return "", fmt.Errorf("%w: %q is not under %q", ErrUnsafePath, loc, base)
			}
		}
		if rel, err = url.PathUnescape(rest); err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnsafePath, err)
		}
	} else {
		host := strings.ReplaceAll(strings.ToLower(u.Host), ":", "_")
		rel = host + "/" + strings.TrimPrefix(u.Path, "/")
	}
	if rel == "" || strings.HasSuffix(rel, "/") {
		return "", fmt.Errorf("%w: %q names a directory", ErrUnsafePath, loc)
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\x00\\") || strings.HasPrefix(seg, tmpPrefix) {
			return "", fmt.Errorf("%w: %q has segment %q", ErrUnsafePath, loc, seg)
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("%w: %q", ErrUnsafePath, loc)
	}
	return rel, nil
}
