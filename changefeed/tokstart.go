package changefeed

import (
	"bytes"
)

// scanStart reads a start tag, resolves its namespaces and pushes it.
func (t *tokenizer) scanStart(b []byte) (tokKind, error) {
	if t.rootDone {
		return 0, t.fail(RuleWellFormed, "element after the root element")
	}
	j := scanName(b, 1)
	if j == len(b) {
		return 0, errNeedMore
	}
	qname := b[1:j]
	if len(qname) == 0 || !isName(qname) {
		return 0, t.fail(RuleWellFormed, "malformed start tag")
	}
	if len(qname) > MaxNameBytes {
		return 0, t.fail(RuleLimits, "element name longer than %d bytes", MaxNameBytes)
	}
	t.attrs = t.attrs[:0]
	t.ascr = t.ascr[:0]
	selfClose := false
	i := j
	for {
		k := skipSpace(b, i)
		if k == len(b) {
			return 0, errNeedMore
		}
		if b[k] == '>' {
			i = k + 1
			break
		}
		if b[k] == '/' {
			if k+1 == len(b) {
				return 0, errNeedMore
			}
			if b[k+1] != '>' {
				return 0, t.fail(RuleWellFormed, "malformed start tag")
			}
			selfClose = true
			i = k + 2
			break
		}
		if k == i {
			return 0, t.fail(RuleWellFormed, "missing space before attribute in <%s>", clip(qname))
		}
		// attribute
		e := scanName(b, k)
		if e == len(b) {
			return 0, errNeedMore
		}
		an := b[k:e]
		if !isName(an) {
			return 0, t.fail(RuleWellFormed, "malformed attribute name in <%s>", clip(qname))
		}
		if len(an) > MaxNameBytes {
			return 0, t.fail(RuleLimits, "attribute name longer than %d bytes", MaxNameBytes)
		}
		e = skipSpace(b, e)
		if e == len(b) {
			return 0, errNeedMore
		}
		if b[e] != '=' {
			return 0, t.fail(RuleWellFormed, "attribute %s without value", clip(an))
		}
		e = skipSpace(b, e+1)
		if e == len(b) {
			return 0, errNeedMore
		}
		q := b[e]
		if q != '"' && q != '\'' {
			return 0, t.fail(RuleWellFormed, "unquoted value of attribute %s", clip(an))
		}
		vEnd := bytes.IndexByte(b[e+1:], q)
		if vEnd < 0 {
			return 0, errNeedMore
		}
		raw := b[e+1 : e+1+vEnd]
		if bytes.IndexByte(raw, '<') >= 0 {
			return 0, t.fail(RuleWellFormed, "'<' in value of attribute %s", clip(an))
		}
		if checkChars(raw) >= 0 {
			return 0, t.fail(RuleWellFormed, "invalid character or UTF-8 in attribute %s", clip(an))
		}
		if len(t.attrs) == MaxAttrs {
			return 0, t.fail(RuleLimits, "more than %d attributes on <%s>", MaxAttrs, clip(qname))
		}
		a := xattr{}
		a.prefix, a.local, _ = splitQName(an)
		if a.local == nil {
			return 0, t.fail(RuleNamespaces, "malformed qualified attribute name %s", clip(an))
		}
		if needsUnescape(raw) {
			vs := len(t.ascr)
			var bad int
			t.ascr, bad = unescape(t.ascr, raw, true)
			if bad >= 0 {
				return 0, t.fail(RuleWellFormed, "invalid or unknown entity reference in attribute %s", clip(an))
			}
			a.vs, a.ve = vs, len(t.ascr)
		} else {
			a.value = raw
			a.inBuf = true
		}
		t.attrs = append(t.attrs, a)
		i = e + 1 + vEnd + 1
	}
	for k := range t.attrs {
		if !t.attrs[k].inBuf {
			t.attrs[k].value = t.ascr[t.attrs[k].vs:t.attrs[k].ve]
		}
	}
	if t.depth >= MaxDepth {
		return 0, t.fail(RuleLimits, "elements nested deeper than %d", MaxDepth)
	}
	// The tag is complete: from here on no errNeedMore.
	t.depth++
	t.sawRoot = true
	t.sawToken = true
	if err := t.declare(); err != nil {
		return 0, err
	}
	prefix, local, ok := splitQName(qname)
	if !ok {
		return 0, t.fail(RuleNamespaces, "malformed qualified name %s", clip(qname))
	}
	t.prefix, t.local = prefix, local
	t.space = t.resolve(prefix, true)
	if prefix != nil && t.space == "" {
		return 0, t.fail(RuleNamespaces, "undeclared namespace prefix %s", clip(prefix))
	}
	if string(prefix) == "xmlns" {
		return 0, t.fail(RuleNamespaces, "element name with the xmlns prefix")
	}
	n := 0
	for k := range t.attrs {
		a := &t.attrs[k]
		if isNSDecl(a) {
			continue
		}
		if a.prefix != nil {
			a.space = t.resolve(a.prefix, false)
			if a.space == "" {
				return 0, t.fail(RuleNamespaces, "undeclared namespace prefix %s", clip(a.prefix))
			}
		}
		for m := 0; m < n; m++ {
			if t.attrs[m].space == a.space && bytes.Equal(t.attrs[m].local, a.local) {
				return 0, t.fail(RuleWellFormed, "duplicate attribute %s on <%s>", clip(a.local), clip(qname))
			}
		}
		t.attrs[n] = *a
		n++
	}
	t.attrs = t.attrs[:n]
	t.nameOff = append(t.nameOff, len(t.names))
	t.names = append(t.names, qname...)
	t.pos += i
	if selfClose {
		t.pendingEnd = true
	}
	return tokStart, nil
}

func needsUnescape(raw []byte) bool {
	for _, c := range raw {
		if c == '&' || c == '\t' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

func isNSDecl(a *xattr) bool {
	return a.prefix == nil && string(a.local) == "xmlns" || string(a.prefix) == "xmlns"
}

// declare pushes the namespace declarations of the current start tag.
func (t *tokenizer) declare() error {
	for k := range t.attrs {
		a := &t.attrs[k]
		if !isNSDecl(a) {
			continue
		}
		var prefix string
		if a.prefix != nil {
			prefix = string(a.local)
			switch {
			case prefix == "xmlns":
				return t.fail(RuleNamespaces, "the xmlns prefix cannot be declared")
			case prefix == "xml" && string(a.value) != NSXML, prefix != "xml" && string(a.value) == NSXML:
				return t.fail(RuleNamespaces, "the xml prefix is bound to %s only", NSXML)
			case len(a.value) == 0:
				return t.fail(RuleNamespaces, "namespace prefix %s bound to the empty name", prefix)
			}
		}
		if string(a.value) == nsXMLNS {
			return t.fail(RuleNamespaces, "the xmlns namespace cannot be declared")
		}
		for m := len(t.ns) - 1; m >= 0 && t.ns[m].depth == t.depth; m-- {
			if t.ns[m].prefix == prefix {
				return t.fail(RuleWellFormed, "duplicate namespace declaration")
			}
		}
		if len(t.ns) >= MaxNamespaceDecls {
			return t.fail(RuleLimits, "more than %d namespace declarations in scope", MaxNamespaceDecls)
		}
		t.ns = append(t.ns, nsBinding{prefix: prefix, uri: internNS(a.value), depth: t.depth})
	}
	return nil
}

func internNS(v []byte) string {
	switch string(v) {
	case NSSitemap:
		return NSSitemap
	case NSRS:
		return NSRS
	case "":
		return ""
	}
	return string(v)
}

// resolve maps a prefix to its namespace. Unprefixed attributes have no
// namespace; unprefixed elements take the default namespace.
func (t *tokenizer) resolve(prefix []byte, elem bool) string {
	if prefix == nil && !elem {
		return ""
	}
	if string(prefix) == "xml" {
		return NSXML
	}
	for m := len(t.ns) - 1; m >= 0; m-- {
		if t.ns[m].prefix == string(prefix) {
			return t.ns[m].uri
		}
	}
	return ""
}
