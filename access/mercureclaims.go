package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// DetailType is the RFC 9396 authorization detail type of the current
// Mercure draft: a detail of this type grants its actions ("publish",
// "subscribe") on the topics its matchers match. Details of other types
// are another service's and grant nothing here.
const DetailType = "https://mercure.rocks/authorization-detail"

// MaxDetails bounds the Mercure authorization details of one token; a
// token with more is refused, as one with more than MaxSelectors topic
// matchers in a detail.
const MaxDetails = 64

// AccessRules are what an access token of the current Mercure draft (RFC
// 9068, typ at+jwt, with authorization_details) must also show: the hub's
// resource identifier in aud (for example
// https://hub.example/.well-known/mercure) and the trusted issuer in iss.
// An empty field is not checked.
type AccessRules struct {
	Audience string
	Issuer   string
}

// detail is one authorization detail as a token carries it.
type detail struct {
	Type    string   `json:"type"`
	Actions []string `json:"actions"`
	Topics  []struct {
		Match     *string `json:"match"`
		MatchType string  `json:"match_type"`
	} `json:"topics"`
}

// accessClaims are the claims VerifyAccess reads: the older mercure claim
// and the draft's authorization_details.
type accessClaims struct {
	Claims
	Details json.RawMessage `json:"authorization_details"`
}

// VerifyAccess verifies raw as Verify does and reads both kinds of Mercure
// token into one grant. A token with authorization_details, or whose typ
// header is at+jwt, is an access token of the current draft: its typ must
// be at+jwt (or application/at+jwt, case-insensitively), it must have an
// exp, its aud must name rules.Audience and its iss be rules.Issuer (when
// set), and every Mercure detail must be well-formed, or the whole token
// is refused. Any other token is read as before, by its mercure claim
// (subscribe and publish selectors). The error says why, fit for an RFC
// 6750 error_description. Verify applies the Verifier's own rules
// (Config.Access).
func (v *Verifier) VerifyAccess(ctx context.Context, raw string, rules AccessRules) (Grant, error) {
	if v == nil {
		return Grant{}, errors.New("this hub verifies no tokens")
	}
	return v.verify(ctx, raw, rules)
}

// addAccess adds to g the grants of c when it is an access token of the
// current draft (typ, its header's, at+jwt, or authorization_details
// present), after checking it against r; other tokens are left as read.
func (r AccessRules) addAccess(g *Grant, typ string, c *accessClaims) error {
	typ = strings.ToLower(strings.TrimPrefix(strings.ToLower(typ), "application/"))
	hasDetails := len(c.Details) > 0 && string(c.Details) != "null"
	if !hasDetails && typ != "at+jwt" {
		return nil
	}
	if err := r.check(typ, &c.Claims); err != nil {
		return err
	}
	if hasDetails {
		if err := g.addDetails(c.Details); err != nil {
			return fmt.Errorf("bad authorization_details: %w", err)
		}
	}
	return nil
}

// check applies the rules of an access token to its header's typ and its
// claims.
func (r AccessRules) check(typ string, c *Claims) error {
	switch {
	case typ != "at+jwt":
		return errors.New("an access token needs the typ header at+jwt")
	case c.ExpiresAt == nil:
		return errors.New("an access token needs an exp claim")
	case r.Audience != "" && !slices.Contains(c.Audience, r.Audience):
		return fmt.Errorf("the token's aud does not name this hub (%s)", clip(r.Audience))
	case r.Issuer != "" && c.Issuer != r.Issuer:
		return errors.New("the token's iss is not the trusted issuer")
	}
	return nil
}

// addDetails adds the grants of the Mercure details in raw to g. A detail
// of another type is skipped; an action other than publish and subscribe
// grants nothing; anything malformed refuses the whole token.
func (g *Grant) addDetails(raw json.RawMessage) error {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return errors.New("not an array")
	}
	n := 0
	for i, item := range list {
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(item, &head); err != nil {
			return fmt.Errorf("detail %d is not an object with a type", i)
		}
		if head.Type != DetailType {
			continue
		}
		if n++; n > MaxDetails {
			return fmt.Errorf("more than %d Mercure details", MaxDetails)
		}
		var d detail
		if err := json.Unmarshal(item, &d); err != nil {
			return fmt.Errorf("detail %d: %v", i, clip(err.Error()))
		}
		if err := g.addDetail(i, &d); err != nil {
			return err
		}
	}
	return nil
}

// addDetail adds one Mercure detail's grants to g.
func (g *Grant) addDetail(i int, d *detail) error {
	if len(d.Actions) == 0 {
		return fmt.Errorf("detail %d has no actions", i)
	}
	if len(d.Topics) == 0 || len(d.Topics) > MaxSelectors {
		return fmt.Errorf("detail %d has %d topic matchers, want 1 to %d", i, len(d.Topics), MaxSelectors)
	}
	var add Selectors
	add.exact = map[string]bool{}
	for j, m := range d.Topics {
		if m.Match == nil || *m.Match == "" {
			return fmt.Errorf("detail %d, matcher %d has no match", i, j)
		}
		s := *m.Match
		if len(s) > MaxSelectorLen {
			return fmt.Errorf("detail %d, matcher %d is longer than %d bytes", i, j, MaxSelectorLen)
		}
		switch {
		case s == "*": // the reserved wildcard, whatever the type
			add.all = true
		case m.MatchType == "" || m.MatchType == "exact":
			add.exact[s] = true
		case m.MatchType == "urlpattern":
			re, err := CompileURLPattern(s)
			if err != nil {
				return fmt.Errorf("detail %d, matcher %d: %w", i, j, err)
			}
			add.templates = append(add.templates, re)
		default:
			return fmt.Errorf("detail %d, matcher %d: unknown match_type %q", i, j, clip(m.MatchType))
		}
	}
	for _, a := range d.Actions {
		switch a {
		case "subscribe":
			g.subscribe = g.subscribe.union(add)
		case "publish":
			g.publish = g.publish.union(add)
		}
	}
	return nil
}

// union returns the selectors matching what s or o matches.
func (s Selectors) union(o Selectors) Selectors {
	u := Selectors{all: s.all || o.all, exact: make(map[string]bool, len(s.exact)+len(o.exact))}
	for k := range s.exact {
		u.exact[k] = true
	}
	for k := range o.exact {
		u.exact[k] = true
	}
	u.templates = append(slices.Clip(s.templates), o.templates...)
	return u
}
