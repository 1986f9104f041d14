package wire

import "testing"

// A NATS URL's password never reaches a message: every URL of a list
// keeps its user and host, its password becomes xxxxx.
func TestRedactURLs_HidesPasswords(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                          "nats://127.0.0.1:4222",
		"nats://reader:s3cret@127.0.0.1:4222":            "nats://reader:xxxxx@127.0.0.1:4222",
		"nats://a:p1@n1:4222,nats://a:p2@n2:4222":        "nats://a:xxxxx@n1:4222,nats://a:xxxxx@n2:4222",
		"nats://token@n1:4222":                           "nats://xxxxx@n1:4222",
		"nats://u:p%zz@n1:4222":                          "(a URL that does not parse)",
		"nats://n1:4222, nats://rshub-hub:hubpw@n2:4222": "nats://n1:4222,nats://rshub-hub:xxxxx@n2:4222",
	} {
		if got := RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}
