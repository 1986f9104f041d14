package wire

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names of the Standard Webhooks scheme (SchemeStandard;
// https://www.standardwebhooks.com, specification v1), in the canonical
// form net/http gives them; header names are case-insensitive, so these are
// the spec's webhook-id, webhook-timestamp and webhook-signature.
const (
	// HeaderWebhookID is the message id: unique per message and the same
	// on every retry of it (StandardMessageID), the key of a receiver's
	// replay check.
	HeaderWebhookID = "Webhook-Id"
	// HeaderWebhookTimestamp is the time of this attempt, decimal Unix
	// seconds.
	HeaderWebhookTimestamp = "Webhook-Timestamp"
	// HeaderWebhookSignature is a space-separated list of
	// "<version>,<base64 signature>"; this hub writes one v1 signature.
	HeaderWebhookSignature = "Webhook-Signature"
)

// StandardSecretPrefix starts a Standard Webhooks secret: "whsec_" then the
// standard base64 of the key.
const StandardSecretPrefix = "whsec_"

// DefaultTolerance is how far a webhook-timestamp may be from the
// receiver's clock, in either direction, before the delivery is refused as
// stale: the specification's suggested five minutes.
const DefaultTolerance = 5 * time.Minute

// ErrStaleTimestamp is wrapped by VerifyStandard's error for a delivery
// whose signature is valid but whose webhook-timestamp lies further from
// now than the tolerance: a captured delivery replayed late, or clocks
// apart.
var ErrStaleTimestamp = errors.New("webhook-timestamp outside the tolerance")

// StandardKey returns the HMAC key of a subscription secret under the
// Standard Webhooks scheme: for a secret "whsec_<base64>", the decoded
// base64 (standard alphabet, padded or not); for any other secret, its raw
// bytes, the same key X-Hub-Signature uses (what a Standard Webhooks
// library calls a raw secret). A whsec_ secret whose rest is not base64,
// or is empty, is an error.
func StandardKey(secret string) ([]byte, error) {
	key, err := appendStandardKey(nil, secret)
	if err != nil {
		return nil, err
	}
	return key, nil
}

// StandardMessageID is the webhook-id of the delivery of the record at
// cursor c to subscription subID: "msg_<subID>_<epoch>-<seq>" ("msg_<subID>_<seq>"
// for a log without an epoch). It is the same on every attempt of that
// delivery (a retry, a redrive) and differs between subscriptions,
// sequences and logs: a log rebuilt from nothing has a new epoch, so its
// records never reuse an id a receiver has seen for other content.
func StandardMessageID(subID string, c Cursor) string {
	return string(c.Append([]byte("msg_" + subID + "_")))
}

// SignStandard returns the webhook-signature value of body sent as message
// msgID at ts under secret (see StandardKey):
// "v1,<standard base64 of HMAC-SHA256 over msgID.unix-seconds.body>". An
// empty msgID or a bad whsec_ secret is an error.
// A Signer makes it without the allocations of a new HMAC.
func SignStandard(secret, msgID string, ts time.Time, body []byte) (string, error) {
	var s Signer
	return s.SignStandard(secret, msgID, ts, body)
}

// standardMAC is the HMAC-SHA256 of "msgID.ts.body" under key.
func standardMAC(key []byte, msgID string, ts int64, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, ts, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return mac.Sum(nil)
}

// VerifyStandard checks a delivery signed under the Standard Webhooks
// scheme: the values of its webhook-id, webhook-timestamp and
// webhook-signature headers against body and secret (see StandardKey), and
// returns the timestamp. The contract:
//
//   - white space around each value is ignored;
//   - all three values empty returns ErrNotSigned;
//   - the signature list is space-separated "<version>,<base64>"; entries
//     of other versions than v1, and malformed entries, are skipped; one v1
//     entry equal (constant time) to the HMAC-SHA256 of
//     "<id>.<timestamp>.<body>" is enough;
//   - a missing value, a timestamp that is not decimal Unix seconds, or no
//     matching v1 signature returns an error wrapping ErrSignatureMismatch
//     with the reason;
//   - a valid signature whose timestamp is more than tolerance before or
//     after now returns an error wrapping ErrStaleTimestamp (a negative
//     tolerance skips this check; 0 means DefaultTolerance).
//
// Everything SignStandard returns verifies. VerifyStandard does not
// remember ids: refusing a repeated webhook-id is the receiver's part
// (client/subscriber keeps them for the tolerance window).
func VerifyStandard(secret, msgID, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) (time.Time, error) {
	msgID, timestamp, signature = strings.TrimSpace(msgID), strings.TrimSpace(timestamp), strings.TrimSpace(signature)
	if msgID == "" && timestamp == "" && signature == "" {
		return time.Time{}, ErrNotSigned
	}
	switch {
	case msgID == "":
		return time.Time{}, fmt.Errorf("%w: no webhook-id", ErrSignatureMismatch)
	case timestamp == "":
		return time.Time{}, fmt.Errorf("%w: no webhook-timestamp", ErrSignatureMismatch)
	case signature == "":
		return time.Time{}, fmt.Errorf("%w: no webhook-signature", ErrSignatureMismatch)
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || timestamp[0] == '+' {
		return time.Time{}, fmt.Errorf("%w: webhook-timestamp %q is not Unix seconds", ErrSignatureMismatch, Clip(timestamp))
	}
	key, err := StandardKey(secret)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %w", ErrSignatureMismatch, err)
	}
	want := standardMAC(key, msgID, sec, body)
	matched := false
	for _, entry := range strings.Fields(signature) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			matched = true
			break
		}
	}
	if !matched {
		return time.Time{}, fmt.Errorf("%w: no v1 signature matches", ErrSignatureMismatch)
	}
	ts := time.Unix(sec, 0)
	tolerance = cmp.Or(tolerance, DefaultTolerance)
	if tolerance > 0 {
		if skew := now.Sub(ts); skew > tolerance || skew < -tolerance {
			return ts, fmt.Errorf("%w: webhook-timestamp %d is %s from now, tolerance %s", ErrStaleTimestamp, sec, skew.Round(time.Second), tolerance)
		}
	}
	return ts, nil
}
