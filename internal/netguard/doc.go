// Package netguard keeps the hub's outgoing HTTP requests (verification of
// intent and webhook delivery) away from addresses that are not on the
// global Internet: loopback, private, link-local, multicast, CGNAT, cloud
// metadata endpoints and the like, unless configuration allows them.
//
// The check is made on the address actually dialled, from the dialer's
// Control hook, so a name that resolves to a public address when the URL is
// validated and to a private one when it is fetched (DNS rebinding) is still
// refused. Clients made by NewClient never follow redirects.
package netguard
