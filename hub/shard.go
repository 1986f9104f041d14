package hub

import "hash/fnv"

// Shards is the fixed number of partitions of the subscription space. Hubs
// sharing a store claim delivery work a shard at a time (delivery/shards.go),
// so the ownership work of a cluster grows with Shards and the number of
// hubs, never with the number of subscriptions. Every hub of a cluster must
// use the same value: it is a constant of the protocol between them.
const Shards = 64

// ShardOf returns the shard of the subscription with the given ID: the
// 32-bit FNV-1a hash of the ID modulo Shards.
func ShardOf(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % Shards)
}

// ValidShard reports whether n names a shard.
func ValidShard(n int) bool { return n >= 0 && n < Shards }
