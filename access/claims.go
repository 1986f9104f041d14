package access

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/yosida95/uritemplate/v3"
)

// Bounds on what a token may claim: selectors beyond them are refused
// with the token, so one token cannot make every request compile
// thousands of templates.
const (
	MaxSelectors   = 64
	MaxSelectorLen = 2048
)

// Action is what a caller wants to do with a topic.
type Action int

// The actions a token's claims grant.
const (
	Subscribe Action = iota // read: subscribe, live sessions, pull-mode documents
	Publish                 // write: fat and thin pings
)

// Claim returns the token claim that grants a, as Mercure names it.
func (a Action) Claim() string {
	if a == Publish {
		return "mercure.publish"
	}
	return "mercure.subscribe"
}

// action returns a's name in an authorization detail's actions.
func (a Action) action() string {
	if a == Publish {
		return "publish"
	}
	return "subscribe"
}

// Claims are a token's registered claims and Mercure's "mercure" claim.
type Claims struct {
	jwt.RegisteredClaims
	Mercure struct {
		Subscribe []string `json:"subscribe"`
		Publish   []string `json:"publish"`
	} `json:"mercure"`
}

// Selectors are the compiled topic selectors of one claim.
type Selectors struct {
	all       bool
	exact     map[string]bool
	templates []*regexp.Regexp
}

// CompileSelectors compiles a claim's selectors: "*" matches every topic,
// a selector with an RFC 6570 expression ("{…}") matches the topics the
// template expands to, any other selector matches itself. It refuses more
// than MaxSelectors, one longer than MaxSelectorLen and a malformed
// template, naming it.
func CompileSelectors(list []string) (Selectors, error) {
	if len(list) > MaxSelectors {
		return Selectors{}, fmt.Errorf("%d selectors, more than %d", len(list), MaxSelectors)
	}
	s := Selectors{exact: make(map[string]bool, len(list))}
	for i, sel := range list {
		switch {
		case len(sel) > MaxSelectorLen:
			return Selectors{}, fmt.Errorf("selector %d is %d bytes, more than %d", i, len(sel), MaxSelectorLen)
		case sel == "*":
			s.all = true
		case strings.ContainsAny(sel, "{}"):
			t, err := uritemplate.New(sel)
			if err != nil {
				return Selectors{}, fmt.Errorf("selector %d is not a URI template: %w", i, err)
			}
			s.templates = append(s.templates, t.Regexp())
		default:
			s.exact[sel] = true
		}
	}
	return s, nil
}

// Match reports whether a selector matches topic.
func (s Selectors) Match(topic string) bool {
	if s.all || s.exact[topic] {
		return true
	}
	for _, re := range s.templates {
		if re.MatchString(topic) {
			return true
		}
	}
	return false
}

// Grant is what a verified token allows, until it expires.
type Grant struct {
	subscribe, publish Selectors
	// Expires is the token's exp; zero when it has none.
	Expires time.Time
}

// GrantOf compiles the claims of a verified token.
func GrantOf(c *Claims) (Grant, error) {
	sub, err := CompileSelectors(c.Mercure.Subscribe)
	if err != nil {
		return Grant{}, fmt.Errorf("mercure.subscribe: %w", err)
	}
	pub, err := CompileSelectors(c.Mercure.Publish)
	if err != nil {
		return Grant{}, fmt.Errorf("mercure.publish: %w", err)
	}
	g := Grant{subscribe: sub, publish: pub}
	if c.ExpiresAt != nil {
		g.Expires = c.ExpiresAt.Time
	}
	return g, nil
}

// Allows reports whether the grant covers action a on topic.
func (g Grant) Allows(a Action, topic string) bool {
	if topic == "" {
		return false
	}
	if a == Publish {
		return g.publish.Match(topic)
	}
	return g.subscribe.Match(topic)
}
