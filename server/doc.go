// Package server runs a whole hub process: NATS (embedded or remote), the
// notification log, the state store, the hub, the admin API, the delivery
// engines, pull mode, metrics, health and the HTTP server, each built by
// one step of Run.
//
// cmd/hub fills a Config from flags; a Go program embeds a whole hub by
// calling Run with a Config that starts from Defaults (examples/demo
// does); package servertest starts one in a test.
package server
