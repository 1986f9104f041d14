package changefeed

// Mode selects how strictly documents are validated.
//
// Both modes accept the Change Notification 1.0 payload capability
// "changelist-notification" on input, as the hub must; encoders should emit
// "change-notification".
//
// Strict is what the hub enforces on intake. Lenient is what a tolerant
// Destination accepts. Lenient relaxes exactly these checks and nothing else:
//
//   - entries of change documents may carry neither rs:md/@datetime nor
//     <lastmod> (Strict: rule change-time);
//   - hash tokens only need the alg:value shape; unknown algorithms and digests
//     of the wrong length or not in hex are accepted (Strict: rule hash);
//   - entries need not be in forward chronological order; the caller is
//     expected to sort them by datetime (Strict: rule order);
//   - Capability List entries announcing a notification channel may lack the
//     rs:ln rel="hub" link (Strict: rule hub);
//   - a Source Description entry's rs:md may have a capability other than
//     capabilitylist (Strict: rule entry-capability);
//   - attributes without a namespace that ResourceSync does not define, and
//     attributes in the ResourceSync namespace, are kept in the Ext fields
//     instead of being rejected (Strict: rule namespaces); unknown elements in
//     the Sitemap or ResourceSync namespace and elements in no namespace are
//     kept as extension elements (Strict: rules structure and namespaces);
//     attributes on <loc>, <lastmod>, <changefreq> and <priority> are dropped
//     (Strict: rule structure);
//   - <loc> and rs:ln href may be relative references (Strict: rule
//     absolute-uri).
//
// Well-formedness, UTF-8, the DTD ban, every size limit, mandatory root
// attributes, change values, datetime syntax and range, from <= until,
// length, pri, the presence of rs:ln rel/href and of loc are never relaxed.
type Mode uint8

// Validation modes.
const (
	// Strict enforces every rule; it is the zero value.
	Strict Mode = iota
	// Lenient relaxes the rules listed in the Mode documentation.
	Lenient
)

// String returns "strict" or "lenient".
func (m Mode) String() string {
	if m == Lenient {
		return "lenient"
	}
	return "strict"
}

// Document-level limits (community limits adopted by ResourceSync, core §7).
const (
	// DefaultMaxBytes is the default limit on a document's size in input bytes: 50 MiB.
	DefaultMaxBytes int64 = 50 << 20
	// DefaultMaxEntries is the default limit on the number of entries: 50,000.
	DefaultMaxEntries = 50000
)

// Hardening limits of the tokenizer. They are never relaxed.
const (
	// MaxDepth is the maximum element nesting depth, root included.
	MaxDepth = 64
	// MaxNameBytes is the maximum length of an element or attribute name.
	MaxNameBytes = 1024
	// MaxAttrs is the maximum number of attributes on one element.
	MaxAttrs = 256
	// MaxTokenBytes is the maximum raw size of a single token: a start tag
	// with its attributes, a run of text, a comment, a CDATA section or a
	// processing instruction.
	MaxTokenBytes = 1 << 20
	// MaxNamespaceDecls is the maximum number of namespace declarations in
	// scope at once.
	MaxNamespaceDecls = 1024
)

// Options controls decoding and validation.
type Options struct {
	// Mode is Strict (the zero value) or Lenient.
	Mode Mode
	// MaxBytes limits the input size in bytes; 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxEntries limits the number of entries; 0 means DefaultMaxEntries.
	MaxEntries int
}

func (o Options) normalized() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	return o
}

func (o Options) strict() bool { return o.Mode != Lenient }
