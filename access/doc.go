// Package access decides who may read and who may publish a private
// channel: it verifies JSON Web Tokens signed with the operator's key (an
// HMAC secret, a PEM public key for RS256, ES256 or EdDSA, or the keys of a
// JWKS URL) and reads their claims the way Mercure does,
//
//	{"mercure": {"subscribe": ["<selector>", …], "publish": ["<selector>", …]}}
//
// where a selector is "*", a topic URI, or an RFC 6570 URI template that
// matches topic URIs. The hub's doors (WebSub subscribe, publish pings,
// /ws, /events, pull-mode documents) call Check with the channel's topic and
// answer with the Refusal it returns: 401 and an RFC 6750
// WWW-Authenticate header for a missing, bad or expired token, 403 naming
// the missing claim, 404 for a caller who shows no token at all (a private
// channel is then indistinguishable from none).
//
// A token means exactly what it says: one with a crit header is refused
// (RFC 7515 §4.1.11), exp has no leeway (a token is refused from the moment
// the sessions it admitted end), and aud and iss are checked when
// Config names them.
//
// Everything but the JWKS fetch is pure; the fetch goes through the HTTP
// client the caller gives (the SSRF-guarded one). A failed fetch goes to
// the operator (Config.OnKeySetError, KeySetState, RecheckKeySet); the
// caller is told only ErrKeySetUnavailable.
package access
