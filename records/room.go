package records

import (
	"context"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
)

// RoomLock marks a MacroJob room as taken until Expires. A room whose lock
// is missing or expired is open (seed 004: the union of never-locked and
// expired entries).
type RoomLock struct {
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
}

// Open reports whether the lock no longer holds at now.
func (l RoomLock) Open(now time.Time) bool { return !now.Before(l.Expires) }

// ReadRoomLock returns the room's lock, or ok=false when it was never taken
// (or its record is unreadable, or not written by the owner it names,
// which counts as never taken).
func ReadRoomLock(ctx context.Context, r crdt.Getter, jobID string, macro uint64) (RoomLock, bool) {
	l, rec, err := crdt.GetJSON[RoomLock](ctx, r, RoomLockKey(jobID, macro), RoomLockType)
	if err != nil || rec.AuthorText() != l.Owner {
		return RoomLock{}, false
	}
	return l, true
}
