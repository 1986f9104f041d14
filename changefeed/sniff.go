package changefeed

import (
	"bytes"
	"errors"
	"io"
)

// Sniffed is what an XML body claims to be, found without validating it.
type Sniffed struct {
	// ResourceSync is set when the root element is <urlset> or
	// <sitemapindex> in the Sitemap namespace, or an rs:md element occurs
	// anywhere: the body must then be validated as a ResourceSync document
	// and never be passed on as foreign content. A body that is not
	// well-formed counts when it names the Sitemap or ResourceSync namespace.
	ResourceSync bool
	// DTD is set when the body has a DOCTYPE or another markup declaration
	// (or, not being well-formed, contains "<!DOCTYPE").
	DTD bool
	// Err is why reading stopped early, nil when the body was read to its
	// end or the answer was found first.
	Err error
}

var (
	nsSitemapBytes = []byte(NSSitemap)
	nsRSBytes      = []byte(NSRS)
	doctypeBytes   = []byte("<!DOCTYPE")
)

// Sniff tells whether body claims to be a Sitemap or ResourceSync document
// and whether it carries a DTD. It reads with the package's tokenizer and
// its limits, stopping as soon as it knows; what fails validation still
// counts as what it claims to be, so a broken Change List is recognised as
// one.
func Sniff(body []byte) Sniffed {
	t := newTokenizer(bytes.NewReader(body), int64(len(body))+1)
	var s Sniffed
	root := true
	for {
		k, err := t.next()
		if err != nil {
			s.Err = err
			break
		}
		if k == tokEOF {
			return s
		}
		if k != tokStart {
			continue
		}
		if root && t.space == NSSitemap && (string(t.local) == "urlset" || string(t.local) == "sitemapindex") {
			s.ResourceSync = true
			return s
		}
		root = false
		if t.space == NSRS && string(t.local) == "md" {
			s.ResourceSync = true
			return s
		}
	}
	if errors.Is(s.Err, RuleDTD) {
		s.DTD = true
		return s
	}
	if errors.Is(s.Err, io.ErrNoProgress) {
		return s
	}
	// not well-formed: judge by what the bytes name
	s.ResourceSync = bytes.Contains(body, nsSitemapBytes) || bytes.Contains(body, nsRSBytes)
	s.DTD = bytes.Contains(body, doctypeBytes)
	return s
}
