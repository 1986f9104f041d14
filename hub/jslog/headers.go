package jslog

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/wire"
)

// EncodeHeaders returns the NATS headers that carry rec's metadata
// (wire.EncodeRecord): a value that could break or be altered by the NATS
// protocol travels RFC 2047 encoded; DecodeMsg reverses it.
func EncodeHeaders(rec wire.Record) nats.Header {
	return nats.Header(wire.EncodeRecord(rec))
}

// DecodeMsg turns a log message into a Record with sequence seq
// (wire.DecodeRecord). subject is the message subject; it names the
// channel when the Rshub-Channel header is missing.
func DecodeMsg(subject string, hdr nats.Header, data []byte, seq uint64) (wire.Record, error) {
	rec, err := wire.DecodeRecord(subject, wire.Header(hdr), data, seq)
	if err != nil {
		return wire.Record{}, fmt.Errorf("jslog: %w", err)
	}
	return rec, nil
}
