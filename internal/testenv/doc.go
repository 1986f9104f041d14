// Package testenv starts the real services the hub's tests need: an
// embedded NATS server with JetStream and a redis-server process, each on
// loopback or in-process, in temporary directories removed after the test.
package testenv
