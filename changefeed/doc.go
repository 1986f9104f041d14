// Package changefeed is the ResourceSync document model of rshub: the types,
// a streaming decoder and encoder, and the validation rules for every
// document the hub reads or writes (change-notification payloads, Change
// Lists and their indexes, Change List Archives, Capability Lists and Source
// Descriptions), plus the pure rules of from/until continuity.
//
// The package does no I/O beyond io.Reader and io.Writer.
package changefeed
