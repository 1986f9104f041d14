package kvstore

// KeyOf is the key a string (an ID, a topic) is stored under.
func KeyOf(s string) string { return digest(s) }
