package changefeed

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
)

// Digest is one algorithm:hexdigest token of a hash attribute.
type Digest struct {
	Alg    string // e.g. "md5", "sha-256"
	Digest string // the value after the colon
}

// knownHashLen gives the hex length of each algorithm Strict mode knows.
func knownHashLen(alg string) int {
	switch alg {
	case "md5":
		return 32
	case "sha-1":
		return 40
	case "sha-256":
		return 64
	}
	return 0
}

// NewHash returns a new hash of a ResourceSync hash algorithm ("md5",
// "sha-1" or "sha-256", lower case), or nil for another one, so a
// destination can check content against a Digest.
func NewHash(alg string) hash.Hash {
	switch alg {
	case "md5":
		return md5.New()
	case "sha-1":
		return sha1.New()
	case "sha-256":
		return sha256.New()
	}
	return nil
}

// ParseHash splits a hash attribute value into its tokens and checks them:
// tokens are separated by XML whitespace, each is alg:value with alg made of
// letters, digits and '-'. In Strict mode alg must be md5, sha-1 or sha-256
// and value a hex digest of that algorithm's length; in Lenient mode value
// only needs to be non-empty. An empty or all-whitespace value is an error.
func ParseHash(s string, mode Mode) ([]Digest, error) {
	if err := checkHash(s, mode != Lenient); err != nil {
		return nil, err
	}
	var out []Digest
	forEachHashToken(s, func(alg, val string) bool {
		out = append(out, Digest{Alg: alg, Digest: val})
		return true
	})
	return out, nil
}

func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// forEachHashToken calls f for each whitespace-separated token, split at its
// first colon (val is "" and alg the whole token when there is none).
func forEachHashToken(s string, f func(alg, val string) bool) {
	i := 0
	for i < len(s) {
		for i < len(s) && isXMLSpace(s[i]) {
			i++
		}
		start := i
		colon := -1
		for i < len(s) && !isXMLSpace(s[i]) {
			if s[i] == ':' && colon < 0 {
				colon = i
			}
			i++
		}
		if start == i {
			return
		}
		tok := s[start:i]
		var alg, val string
		if colon < 0 {
			alg = tok
		} else {
			alg, val = s[start:colon], s[colon+1:i]
		}
		if !f(alg, val) {
			return
		}
	}
}

var errEmptyHash = errors.New("empty hash")

// checkHash validates a hash attribute without allocating on success.
func checkHash(s string, strict bool) error {
	var err error
	n := 0
	forEachHashToken(s, func(alg, val string) bool {
		n++
		if alg == "" {
			err = fmt.Errorf("hash token %q has no algorithm", alg+":"+val)
			return false
		}
		for i := 0; i < len(alg); i++ {
			c := alg[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				err = fmt.Errorf("hash algorithm %q is not a token", alg)
				return false
			}
		}
		if val == "" {
			err = fmt.Errorf("hash token %q is not alg:value", alg)
			return false
		}
		if !strict {
			return true
		}
		want := knownHashLen(alg)
		if want == 0 {
			err = fmt.Errorf("unknown hash algorithm %q (want md5, sha-1 or sha-256)", alg)
			return false
		}
		if len(val) != want {
			err = fmt.Errorf("%s digest has %d hex digits, want %d", alg, len(val), want)
			return false
		}
		for i := 0; i < len(val); i++ {
			c := val[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				err = fmt.Errorf("%s digest %q is not hexadecimal", alg, val)
				return false
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return errEmptyHash
	}
	return nil
}
