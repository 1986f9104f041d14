package wire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MetadataEpoch is the key of the log stream's metadata that holds the
// log's epoch: a random identity given to the stream when it is created,
// kept across restarts, new for a log rebuilt from nothing.
const MetadataEpoch = "rshub_epoch"

// MaxEpochLen bounds an epoch: 1 to MaxEpochLen of 0-9 a-z.
const MaxEpochLen = 32

// maxCursorLen bounds the text of a cursor: an epoch, "-" and a uint64.
const maxCursorLen = MaxEpochLen + 1 + 20

// Cursor is a position in the hub's log as a client holds it: the log's
// epoch and a sequence. Its text (String) is the id of a Server-Sent Event,
// the id of a WebSocket frame, and what since= and Last-Event-ID take back:
// "<epoch>-<seq>", or the bare "<seq>" of a log without an epoch, the
// format from before epochs, still accepted (the hub then checks only that
// the sequence is not ahead of its log).
type Cursor struct {
	Epoch string // "" when unknown: the bare-sequence format
	Seq   uint64
}

// String returns the cursor's text: "<epoch>-<seq>", or "<seq>" without
// an epoch.
func (c Cursor) String() string { return string(c.Append(nil)) }

// Append appends the cursor's text to b.
func (c Cursor) Append(b []byte) []byte {
	if c.Epoch != "" {
		b = append(append(b, c.Epoch...), '-')
	}
	return strconv.AppendUint(b, c.Seq, 10)
}

// ParseCursor reads a cursor's text: "<seq>" or "<epoch>-<seq>", with the
// sequence a decimal integer up to 2^64-1 and the epoch 1 to MaxEpochLen
// of 0-9 a-z (ValidEpoch). The error quotes s when it is short enough.
func ParseCursor(s string) (Cursor, error) {
	if len(s) > maxCursorLen {
		return Cursor{}, fmt.Errorf("not a sequence number: %d bytes, at most %d allowed", len(s), maxCursorLen)
	}
	epoch, seq, found := strings.Cut(s, "-")
	if !found {
		epoch = ""
		seq = s
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil || seq[0] == '+' || (found && !ValidEpoch(epoch)) {
		return Cursor{}, fmt.Errorf("%q is not a sequence number (a decimal integer up to 2^64-1) nor <epoch>-<sequence number> (an epoch is 1 to %d of 0-9 a-z)", s, MaxEpochLen)
	}
	return Cursor{Epoch: epoch, Seq: n}, nil
}

// ValidEpoch reports whether e is a well-formed epoch: 1 to MaxEpochLen
// of 0-9 a-z.
func ValidEpoch(e string) bool {
	if e == "" || len(e) > MaxEpochLen {
		return false
	}
	for i := range len(e) {
		if (e[i] < '0' || e[i] > '9') && (e[i] < 'a' || e[i] > 'z') {
			return false
		}
	}
	return true
}

// ErrCursorReset is wrapped by CheckCursor's answer for a cursor the log
// cannot resume from.
var ErrCursorReset = errors.New("cursor reset")

// CheckCursor returns an error wrapping ErrCursorReset, saying why, when a
// client at c cannot resume on the log with identity epoch whose last
// sequence is last: c comes from another log (both epochs known and
// different), or c is ahead of the log's end. nil otherwise. A log or a
// cursor without an epoch is checked on the sequence alone.
func CheckCursor(c Cursor, epoch string, last uint64) error {
	switch {
	case c.Epoch != "" && epoch != "" && c.Epoch != epoch:
		return fmt.Errorf("%w: the cursor is from log %s, this log is %s (rebuilt)", ErrCursorReset, c.Epoch, epoch)
	case c.Seq > last:
		return fmt.Errorf("%w: the cursor %d is ahead of the log's last sequence %d", ErrCursorReset, c.Seq, last)
	}
	return nil
}
