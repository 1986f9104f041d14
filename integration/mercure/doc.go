// Package mercure runs Mercure's official conformance suite (the
// conformance-tests of the Go module github.com/dunglas/mercure, a
// Playwright suite) against a whole hub, in Debian's Chromium; its test
// files hold everything.
package mercure
