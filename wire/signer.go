package wire

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"
)

// Signer makes the signatures of Sign and SignStandard with the hash
// states, key pads and buffers of the last one, where an HMAC made anew
// for each costs two hash states, its pads and their copies: a goroutine
// that signs delivery after delivery keeps one. The zero value is ready;
// one goroutine at a time uses it. Its HMAC is RFC 2104's, as crypto/hmac
// computes it (TestSigner_IsCryptoHMAC); Verify and VerifyStandard check
// with crypto/hmac.
type Signer struct {
	macs [len(sigMethods)]*macState // by sigMethods index, made when first used
	key  []byte                     // a Standard Webhooks key decoded
	msg  []byte                     // Standard Webhooks' "msgID.ts." before the body
	out  []byte                     // the value being written
}

// macState is an HMAC of one hash, reused for each key and message.
type macState struct {
	inner, outer hash.Hash
	ipad, opad   []byte // one block each
	sum          []byte
}

// state returns s's HMAC of sigMethods[i].
func (s *Signer) state(i int) *macState {
	if s.macs[i] == nil {
		h := sigMethods[i].h
		inner, outer := h(), h()
		n := inner.BlockSize()
		s.macs[i] = &macState{inner: inner, outer: outer, ipad: make([]byte, n), opad: make([]byte, n)}
	}
	return s.macs[i]
}

// macKey sets m's pads for key: key itself when it fits a block, else
// its hash, padded with zeros (RFC 2104).
func macKey[K string | []byte](m *macState, key K) {
	if len(key) > len(m.ipad) {
		m.inner.Reset()
		m.inner.Write([]byte(key))
		m.sum = m.inner.Sum(m.sum[:0])
		macKey(m, m.sum)
		return
	}
	for i := range m.ipad {
		var c byte
		if i < len(key) {
			c = key[i]
		}
		m.ipad[i], m.opad[i] = c^0x36, c^0x5c
	}
}

// mac returns the HMAC of the parts, one after the other, under the key
// last set (macKey); it is valid until m is used again.
func (m *macState) mac(parts ...[]byte) []byte {
	m.inner.Reset()
	m.inner.Write(m.ipad)
	for _, p := range parts {
		m.inner.Write(p)
	}
	m.sum = m.inner.Sum(m.sum[:0])
	m.outer.Reset()
	m.outer.Write(m.opad)
	m.outer.Write(m.sum)
	m.sum = m.outer.Sum(m.sum[:0])
	return m.sum
}

// Sign is the package's Sign, made with s's state.
func (s *Signer) Sign(method, secret string, body []byte) (string, error) {
	m := strings.ToLower(cmp.Or(method, DefaultSigMethod))
	i := sigMethod(m)
	if i < 0 {
		return "", fmt.Errorf("unknown signature method %q", Clip(method))
	}
	st := s.state(i)
	macKey(st, secret)
	sum := st.mac(body)
	s.out = append(append(s.out[:0], m...), '=')
	s.out = hex.AppendEncode(s.out, sum)
	return string(s.out), nil
}

// SignStandard is the package's SignStandard, made with s's state.
func (s *Signer) SignStandard(secret, msgID string, ts time.Time, body []byte) (string, error) {
	if msgID == "" {
		return "", errors.New("webhook-id is empty")
	}
	var err error
	if s.key, err = appendStandardKey(s.key[:0], secret); err != nil {
		return "", err
	}
	st := s.state(sigMethod("sha256"))
	macKey(st, s.key)
	s.msg = append(append(s.msg[:0], msgID...), '.')
	s.msg = append(strconv.AppendInt(s.msg, ts.Unix(), 10), '.')
	sum := st.mac(s.msg, body)
	s.out = append(s.out[:0], "v1,"...)
	s.out = base64.StdEncoding.AppendEncode(s.out, sum)
	return string(s.out), nil
}

// appendStandardKey appends to dst the HMAC key of secret under the
// Standard Webhooks scheme (StandardKey): a "whsec_" secret's decoded
// base64, any other secret's raw bytes.
func appendStandardKey(dst []byte, secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, StandardSecretPrefix)
	if !ok {
		return append(dst, secret...), nil
	}
	key, err := base64.StdEncoding.AppendDecode(dst, []byte(rest))
	if err != nil {
		key, err = base64.RawStdEncoding.AppendDecode(dst, []byte(rest))
	}
	if err != nil {
		return dst, fmt.Errorf("%s secret: the rest is not base64: %w", StandardSecretPrefix, err)
	}
	if len(key) == len(dst) {
		return dst, fmt.Errorf("%s secret: the key is empty", StandardSecretPrefix)
	}
	return key, nil
}
