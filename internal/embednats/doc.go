// Package embednats runs a NATS server with JetStream inside the hub's own
// process, so the embedded default needs nothing else installed.
//
// # Access
//
// A server started with Config.Access has users and nothing else gets in:
// the hub's own (HubUser, in process only, Connect presents it) may do
// everything and is the only writer of the log and the key-value buckets;
// the read user (ReadPermissions) may read the log's stream and subjects
// over TCP; edges link to the leaf listener as LeafUser (LeafPermissions).
// The permissions list what is allowed, never what is refused. The hub's
// own answers arrive on an inbox of its own (HubInbox), not on _INBOX,
// which readers may subscribe to. AuthorizationConf gives an external
// nats-server the same users.
//
// # Durability
//
// The JetStream file store (nats-server v2.15, server/filestore.go) writes
// every message of a single-replica stream to its message block with a
// write(2) call before the publish is acknowledged: the stream is created
// with flush-in-place (FileStoreConfig.AsyncFlush is false for R1 streams
// with the default persist mode, so writeMsgRecord calls
// flushPendingMsgsLocked inline). What happens after that write depends on
// the SyncPolicy:
//
//   - SyncDefault keeps the server's default sync_interval of two minutes
//     (defaultSyncInterval): block files are fsynced by a background timer.
//     An acknowledged message is in the operating system's page cache, so it
//     survives the hub process crashing or being killed (SIGKILL, OOM
//     killer, panic). A kernel crash or power loss can lose up to the last
//     two minutes of acknowledged messages.
//   - SyncAlways sets sync_always: after each write the message block is
//     fsynced (msgBlock.flushPendingMsgsLocked calls mb.mfd.Sync) and the
//     store's index and state files are written with O_SYNC, all before the
//     acknowledgement. An acknowledged message survives power loss, as far
//     as the disk honours fsync. Every publish pays one fsync.
//
// Streams with more than one replica (a cluster) or with the async persist
// mode flush asynchronously and rely on the Raft log instead; this package
// only concerns the single embedded server.
package embednats
