// Package macrojob holds MacroJob rooms and the in-memory MicroJob queue with
// its owner handoff, written as a pure state machine.
//
// # The MicroJob queue
//
// A processor that takes a MacroJob room creates the room's Queue with itself
// as owner; every processor that joins the room's pubsub channel creates one
// too, naming the same creator and the same MicroJob ids (slicing is a pure
// function of the JobInfo, so all agree on them). Queue follows the pattern
// of etcd-io/raft's RawNode: each method takes an event and the queue time,
// changes state, and returns the messages to publish. It starts no
// goroutines, reads no clock and does no I/O, so the network wrapper around
// it stays thin:
//
//	for each message m from peer p on the room channel:
//	    msg, err := macrojob.Decode(m)   // size-limited, versioned
//	    out, err := q.Receive(p, msg, now)
//	    publish(out)                     // macrojob.Encode each
//	every second:   publish(q.Tick(now))
//	when idle:      publish(q.Request(now))
//	then:           for _, id := range q.Ready() { run id; publish(q.Complete(id, now)) }
//
// The wrapper signs and checks every message with the sender's libp2p key
// (gossipsub StrictSign) and passes the verified sender to Receive; Queue
// checks every claim a message makes against that sender and its own state.
//
// Rules, in short (docs/PROTOCOL.md has the full text): every processor keeps
// the snapshot with the highest Clock, and only the owner named by it changes
// the queue. A processor that wants work publishes a Request; the owner locks
// up to MaxLocksPerTurn MicroJobs for itself when it wants work, then passes
// ownership to a pending requester picked by the Chooser from a public seed.
// Locks expire after ProcessingTimeout; processed ids merge as a union from
// every message and never revert. If the owner stays silent, the members of
// the snapshot take over in a deterministic order, one OwnerTimeout apart; two
// owners (after a partition) converge on the higher clock. Everything is
// re-published every Rebroadcast, so no single lost message stalls the queue.
//
// # Opening a room
//
// Which processor opens a MacroJob's room first is FirstOwners
// (rendezvous hashing, no processor named for more than its share), and
// the order of the others is Order. When the others claim it, pause,
// defer or join is DecideOpen: a pure function of the room's lock, the
// processor's rank, the claims heard and the time, with the rules in
// opening.go and scripts in testdata/open.
//
// Caveat: the queue schedules work among processors that follow the protocol.
// A processor on the channel can claim ownership or report false results;
// that disturbs scheduling, never payment, because results are proven by the
// verifier MicroJob and the commitments in the CRDT, not by the queue.
package macrojob
