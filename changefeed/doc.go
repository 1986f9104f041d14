// Package changefeed is the ResourceSync document model of rshub: the types,
// a streaming decoder and encoder, and the validation rules for every
// document the hub reads or writes (change-notification payloads, Change
// Lists and their indexes, Change List Archives, Capability Lists and Source
// Descriptions), plus the pure rules of from/until continuity.
//
// The package does no I/O beyond io.Reader and io.Writer.
//
// # Decoding
//
// NewDecoder reads a document as a stream (Header, then Next per entry) and
// validates each part as it arrives; Parse decodes a whole Document. The
// XML is read by a purpose-built tokenizer for the subset Sitemaps use. It
// accepts UTF-8 only and rejects DOCTYPE and every other markup declaration.
// Nesting depth, name, attribute and token sizes, the number of input bytes
// (Options.MaxBytes) and of entries (Options.MaxEntries) are bounded (see
// limits.go). Extension attributes and elements in other namespaces are kept
// in the Ext fields, and root-level extension elements after the first entry
// in Document.Trailer, so they survive a decode/encode round trip.
//
// # Validation
//
// Every rejection is a *ValidationError naming its Rule, the 0-based entry
// (-1 for the root) and the input line. errors.Is(err, RuleX) and
// errors.Is(err, ErrInvalid) both work. Validate applies the same rules to
// a Document built in memory. Mode documents what Lenient relaxes.
//
// # Encoding
//
// NewEncoder writes a document as a stream in memory independent of the
// number of entries; Encode writes a whole Document. Decoding the output
// gives back the same Document (reflect.DeepEqual).
package changefeed
