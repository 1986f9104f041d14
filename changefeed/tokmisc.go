package changefeed

import "bytes"

// Processing instructions, the XML declaration, comments, CDATA and the
// refused DOCTYPE: the markup that starts with <? or <!.

func (t *tokenizer) scanPI(b []byte) (tokKind, error) {
	k := bytes.Index(b[2:], []byte("?>"))
	if k < 0 {
		if len(b) > MaxTokenBytes {
			return 0, t.fail(RuleLimits, "processing instruction longer than %d bytes", MaxTokenBytes)
		}
		return 0, errNeedMore
	}
	body := b[2 : 2+k]
	j := scanName(body, 0)
	target := body[:j]
	if !isName(target) || bytes.IndexByte(target, ':') >= 0 {
		return 0, t.fail(RuleWellFormed, "malformed processing instruction")
	}
	if j < len(body) && !isXMLSpace(body[j]) {
		return 0, t.fail(RuleWellFormed, "malformed processing instruction")
	}
	if checkChars(body) >= 0 {
		return 0, t.fail(RuleWellFormed, "invalid character or UTF-8 in processing instruction")
	}
	if bytes.EqualFold(target, []byte("xml")) {
		if t.sawToken || t.consumed+int64(t.pos) > 3 || string(target) != "xml" {
			return 0, t.fail(RuleWellFormed, "XML declaration not at the start of the document")
		}
		if err := t.checkXMLDecl(body[j:]); err != nil {
			return 0, err
		}
	}
	t.sawToken = true
	t.pos += 2 + k + 2
	return 0, nil
}

// checkXMLDecl checks the pseudo-attributes of the XML declaration.
func (t *tokenizer) checkXMLDecl(b []byte) error {
	var version, encoding []byte
	for i := skipSpace(b, 0); i < len(b); i = skipSpace(b, i) {
		j := scanName(b, i)
		name := b[i:j]
		j = skipSpace(b, j)
		if j >= len(b) || b[j] != '=' {
			return t.fail(RuleWellFormed, "malformed XML declaration")
		}
		j = skipSpace(b, j+1)
		if j >= len(b) || b[j] != '"' && b[j] != '\'' {
			return t.fail(RuleWellFormed, "malformed XML declaration")
		}
		q := b[j]
		e := bytes.IndexByte(b[j+1:], q)
		if e < 0 {
			return t.fail(RuleWellFormed, "malformed XML declaration")
		}
		val := b[j+1 : j+1+e]
		switch string(name) {
		case "version":
			version = val
		case "encoding":
			encoding = val
		case "standalone":
		default:
			return t.fail(RuleWellFormed, "unknown XML declaration attribute %q", clip(name))
		}
		i = j + 1 + e + 1
		if i < len(b) && !isXMLSpace(b[i]) {
			return t.fail(RuleWellFormed, "malformed XML declaration")
		}
	}
	if version != nil && string(version) != "1.0" {
		return t.fail(RuleWellFormed, "unsupported XML version %q", clip(version))
	}
	if encoding != nil && !bytes.EqualFold(encoding, []byte("utf-8")) {
		return t.fail(RuleWellFormed, "unsupported encoding %q: documents must be UTF-8", clip(encoding))
	}
	return nil
}

func (t *tokenizer) scanBang(b []byte) (tokKind, error) {
	if len(b) < 10 && !t.eof {
		return 0, errNeedMore
	}
	if bytes.HasPrefix(b, []byte("<!--")) {
		k := bytes.Index(b[4:], []byte("--"))
		if k < 0 {
			if len(b) > MaxTokenBytes {
				return 0, t.fail(RuleLimits, "comment longer than %d bytes", MaxTokenBytes)
			}
			return 0, errNeedMore
		}
		if 4+k+2 >= len(b) {
			return 0, errNeedMore
		}
		if b[4+k+2] != '>' {
			return 0, t.fail(RuleWellFormed, `"--" inside a comment`)
		}
		if checkChars(b[4:4+k]) >= 0 {
			return 0, t.fail(RuleWellFormed, "invalid character or UTF-8 in comment")
		}
		t.sawToken = true
		t.pos += 4 + k + 3
		return 0, nil
	}
	const cdata = "<![CDATA["
	if len(b) < len(cdata) {
		if bytes.HasPrefix([]byte(cdata), b) && !t.eof {
			return 0, errNeedMore
		}
	} else if string(b[:len(cdata)]) == cdata {
		if t.depth == 0 {
			return 0, t.fail(RuleWellFormed, "CDATA section outside the root element")
		}
		k := bytes.Index(b[len(cdata):], []byte("]]>"))
		if k < 0 {
			if len(b) > MaxTokenBytes {
				return 0, t.fail(RuleLimits, "CDATA section longer than %d bytes", MaxTokenBytes)
			}
			return 0, errNeedMore
		}
		raw := b[len(cdata) : len(cdata)+k]
		if checkChars(raw) >= 0 {
			return 0, t.fail(RuleWellFormed, "invalid character or UTF-8 in CDATA section")
		}
		if bytes.IndexByte(raw, '\r') >= 0 {
			t.scratch = t.scratch[:0]
			for i := 0; i < len(raw); i++ {
				c := raw[i]
				if c == '\r' {
					if i+1 < len(raw) && raw[i+1] == '\n' {
						continue
					}
					c = '\n'
				}
				t.scratch = append(t.scratch, c)
			}
			raw = t.scratch
		}
		t.text = raw
		t.pos += len(cdata) + k + 3
		return tokText, nil
	}
	for _, decl := range []string{"<!DOCTYPE", "<!ENTITY", "<!ELEMENT", "<!ATTLIST", "<!NOTATION"} {
		if len(b) < len(decl) && bytes.HasPrefix([]byte(decl), b) && !t.eof {
			return 0, errNeedMore
		}
		if bytes.HasPrefix(b, []byte(decl)) {
			return 0, t.fail(RuleDTD, "%s declarations are not allowed", decl[2:])
		}
	}
	return 0, t.fail(RuleWellFormed, "malformed markup after <!")
}

func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
