package jobs

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// Messages of the Jobs channel (/jobmesh/2/jobs) and of each Job channel
// (/jobmesh/2/job/<jobID>). They are JSON objects with a version and a
// kind; the pubsub layer signs every message with its sender's key, and
// CheckSender ties the claims in a message to that sender.

// ChannelVersion is the version of the channel messages.
const ChannelVersion = 1

// MaxChannelMsg bounds an encoded channel message (a JobInfo fits easily).
const MaxChannelMsg = 128 << 10

// MaxProgressMicros bounds the MicroJobs one progress message names.
const MaxProgressMicros = 64

// Micros returns the MicroJobs a progress message names: MicroIDs, or
// MicroID alone.
func (m ChannelMsg) Micros() []string {
	if len(m.MicroIDs) > 0 {
		return m.MicroIDs
	}
	if m.MicroID != "" {
		return []string{m.MicroID}
	}
	return nil
}

// Progress returns the progress message by which processor says micros
// of job are complete (KindProgress): MicroID for one, which every version
// of the channel reads, MicroIDs for more. It panics on none or more than
// MaxProgressMicros, a caller's error.
func Progress(job, processor string, micros []string) ChannelMsg {
	m := ChannelMsg{Kind: KindProgress, JobID: job, Processor: processor}
	switch n := len(micros); {
	case n == 0 || n > MaxProgressMicros:
		panic(fmt.Sprintf("jobs: progress of %d MicroJobs", n))
	case n == 1:
		m.MicroID = micros[0]
	default:
		m.MicroIDs = micros
	}
	return m
}

// Kinds of channel message.
const (
	// KindJob announces a job; Job carries its canonical JobInfo, so a
	// processor need not wait for the replicated store to sync.
	KindJob = "job"
	// KindQuery asks for open jobs; nodes answer with KindJob messages.
	KindQuery = "query"
	// KindProgress says that MicroID (or each of MicroIDs) of JobID is
	// complete: Processor owns the done room of their MacroJob, or ran the
	// verifier MicroJob named.
	KindProgress = "progress"
	// KindRoom (Job channel) announces a MacroJob room and its owner.
	KindRoom = "room"
	// KindRooms (Job channel) asks for open rooms.
	KindRooms = "rooms"
	// KindFinalizing (Job channel) says that Processor is finishing the
	// complete JobID (re-runs, output assembly, verdict): other
	// processors stand by instead of repeating that work.
	KindFinalizing = "finalizing"
)

// ErrBadMessage is wrapped by every channel decoding error.
var ErrBadMessage = errors.New("jobs: bad channel message")

// ChannelMsg is one message on the Jobs or a Job channel.
type ChannelMsg struct {
	V       int    `json:"v"`
	Kind    string `json:"kind"`
	Job     []byte `json:"job,omitempty"`      // KindJob: canonical JobInfo
	JobID   string `json:"job_id,omitempty"`   // progress, room, rooms, finalizing
	Macro   uint64 `json:"macro,omitempty"`    // room
	MicroID string `json:"micro_id,omitempty"` // progress: one MicroJob
	// MicroIDs (progress) are the MicroJobs of one turn, 2 to
	// MaxProgressMicros of them, instead of MicroID.
	MicroIDs  []string `json:"micro_ids,omitempty"`
	Processor string   `json:"processor,omitempty"` // progress, room, finalizing: the claiming peer
	Open      int      `json:"open,omitempty"`      // room: MicroJobs not yet processed
}

// EncodeChannelMsg encodes m.
func EncodeChannelMsg(m ChannelMsg) ([]byte, error) {
	m.V = ChannelVersion
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxChannelMsg {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrBadMessage, len(b), MaxChannelMsg)
	}
	return b, nil
}

// DecodeChannelMsg decodes and checks a message. A KindJob message's JobInfo
// must decode canonically (its deadline is not checked here).
func DecodeChannelMsg(b []byte) (ChannelMsg, error) {
	var m ChannelMsg
	if err := strictjson.Decode(b, MaxChannelMsg, &m); err != nil {
		return m, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	if m.V != ChannelVersion {
		return m, fmt.Errorf("%w: version %d", ErrBadMessage, m.V)
	}
	hexID := func() error {
		if _, err := ParseHash(m.JobID); err != nil {
			return fmt.Errorf("%w: job id: %w", ErrBadMessage, err)
		}
		return nil
	}
	switch m.Kind {
	case KindJob:
		if _, err := Decode(m.Job); err != nil {
			return m, fmt.Errorf("%w: %w", ErrBadMessage, err)
		}
	case KindQuery:
	case KindProgress:
		if err := hexID(); err != nil {
			return m, err
		}
		switch {
		case m.MicroIDs == nil:
			if _, err := ParseHash(m.MicroID); err != nil {
				return m, fmt.Errorf("%w: micro id: %w", ErrBadMessage, err)
			}
		case m.MicroID != "":
			return m, fmt.Errorf("%w: both micro_id and micro_ids", ErrBadMessage)
		case len(m.MicroIDs) < 2 || len(m.MicroIDs) > MaxProgressMicros:
			return m, fmt.Errorf("%w: %d micro ids, want 2 to %d", ErrBadMessage, len(m.MicroIDs), MaxProgressMicros)
		default:
			for _, id := range m.MicroIDs {
				if _, err := ParseHash(id); err != nil {
					return m, fmt.Errorf("%w: micro id: %w", ErrBadMessage, err)
				}
			}
		}
		if m.Processor == "" {
			return m, fmt.Errorf("%w: no processor", ErrBadMessage)
		}
	case KindRoom:
		if err := hexID(); err != nil {
			return m, err
		}
		if m.Processor == "" || m.Open < 0 {
			return m, fmt.Errorf("%w: room without owner", ErrBadMessage)
		}
	case KindRooms:
		if err := hexID(); err != nil {
			return m, err
		}
	case KindFinalizing:
		if err := hexID(); err != nil {
			return m, err
		}
		if m.Processor == "" {
			return m, fmt.Errorf("%w: no processor", ErrBadMessage)
		}
	default:
		return m, fmt.Errorf("%w: kind %q", ErrBadMessage, m.Kind)
	}
	return m, nil
}

// CheckSender ties a message's claims to the peer that signed it: only a
// processor itself may say it completed a MicroJob, owns a room or is
// finishing a job.
func CheckSender(from string, m ChannelMsg) error {
	if (m.Kind == KindProgress || m.Kind == KindRoom || m.Kind == KindFinalizing) && m.Processor != from {
		return fmt.Errorf("%w: %s claims to be %s", ErrBadMessage, from, m.Processor)
	}
	return nil
}
