package hub

import "context"

// SweptShards is the periodic sweep's memory of the shards, for tests.
type SweptShards = [Shards]sweptShard

// SweepDue runs one pass of the periodic sweep, for tests.
func SweepDue(ctx context.Context, h *Hub, swept *SweptShards) error { return h.sweepDue(ctx, swept) }
