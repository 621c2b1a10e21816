package records

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/internal/peertext"
	"github.com/jobmesh/jobmesh/jobs"
)

// Errors of the key layout, matched with errors.Is.
var (
	// ErrKey: a store key is not one of the layout's keys, in its one
	// canonical form.
	ErrKey = errors.New("records: invalid record key")
	// ErrAuthor: a record is not authored by the peer its key names.
	ErrAuthor = errors.New("records: record author is not the key's peer")
)

// The two roots of the layout.
const (
	// JobsPrefix holds every job's records, under /jobs/<job ID>.
	JobsPrefix = "/jobs"
	// NodesPrefix holds one advertisement per processor, and its wallet
	// binding, written only by that processor (AuthorPolicy).
	NodesPrefix = "/nodes"
)

// JobKey is where a job's JobInfo lives; every other record of the job
// lives under it.
func JobKey(id jobs.ID) string { return JobsPrefix + "/" + id.String() }

// VerdictPrefix is where a job's verdicts live, one per author.
func VerdictPrefix(id jobs.ID) string { return JobKey(id) + "/verdict/" }

// VerdictKey is where author keeps its verdict of a job.
func VerdictKey(id jobs.ID, author string) string { return VerdictPrefix(id) + author }

// disputeBlock is the key prefix of one disputed block's records.
func disputeBlock(id jobs.ID, block uint64) string {
	return JobKey(id) + "/dispute/" + strconv.FormatUint(block, 10)
}

// DisputeKey is where author asks for a re-run of a disputed block.
func DisputeKey(id jobs.ID, block uint64, author string) string {
	return disputeBlock(id, block) + "/" + author
}

// RerunKey is where processor stores its re-run of block, for a dispute
// or a check alike.
func RerunKey(id jobs.ID, block uint64, processor string) string {
	return disputeBlock(id, block) + "/rerun/" + processor
}

// CheckKey is where author asks for a self-checked block's re-runs. The
// re-runs themselves are stored under RerunKey, like a dispute's.
func CheckKey(id jobs.ID, block uint64, author string) string {
	return JobKey(id) + "/check/" + strconv.FormatUint(block, 10) + "/" + author
}

// RedoKey is where author marks a MicroJob for redoing.
func RedoKey(id jobs.ID, micro jobs.ID, author string) string {
	return JobKey(id) + "/redo/" + micro.String() + "/" + author
}

// CancelKey is where a job's cancel record lives.
func CancelKey(id jobs.ID) string { return JobKey(id) + "/cancel" }

// AbortedKey is where a job's JobAborted record lives.
func AbortedKey(id jobs.ID) string { return JobKey(id) + "/aborted" }

// SettlementKey is where a job's proposed settlement lives.
func SettlementKey(id jobs.ID) string { return JobKey(id) + "/settlement" }

// SignatureKey is where processor stores its signature of the settlement.
func SignatureKey(id jobs.ID, processor string) string {
	return JobKey(id) + "/signature/" + processor
}

// SettledKey is where the settle transaction is recorded.
func SettledKey(id jobs.ID) string { return JobKey(id) + "/settled" }

// HoldersPrefix is the key prefix of job id's holder records.
func HoldersPrefix(id jobs.ID) string { return JobKey(id) + "/holders/" }

// HolderKey is where holder says it holds job id's output.
func HolderKey(id jobs.ID, holder peer.ID) string { return HoldersPrefix(id) + holder.String() }

// GroupPrefix is the prefix of a job's group records.
func GroupPrefix(id jobs.ID) string { return JobKey(id) + "/group/" }

// GroupKey is where chooser writes its group record of job id. Each
// chooser writes its own key, so racing choosers do not overwrite one
// another in the store; readers pick one winner among them.
func GroupKey(id jobs.ID, chooser string) string { return GroupPrefix(id) + chooser }

// RoomLockKey is the store key of a MacroJob room's lock. The job is
// given as text: a room names its job so.
func RoomLockKey(jobID string, macro uint64) string {
	return JobsPrefix + "/" + jobID + "/macro/" + strconv.FormatUint(macro, 10) + "/room"
}

// MacroPrefix is the key prefix of every record of MacroJob macro of job
// id.
func MacroPrefix(id jobs.ID, macro uint64) string {
	return JobKey(id) + "/macro/" + strconv.FormatUint(macro, 10) + "/"
}

// TookPrefix is the key prefix of the took records of MacroJob macro of
// job id.
func TookPrefix(id jobs.ID, macro uint64) string {
	return MacroPrefix(id, macro) + "took/"
}

// TookKey is where processor records that it took MicroJobs of MacroJob
// macro of job id: one key per processor, so a takeover of the room or of
// the MicroJobs leaves it (AuthorPolicy lets no one else write it).
func TookKey(id jobs.ID, macro uint64, processor string) string {
	return TookPrefix(id, macro) + processor
}

// CommittedKey is where aggregator keeps its committed aggregate of
// MacroJob macro of job id (CommittedType).
func CommittedKey(id jobs.ID, macro uint64, aggregator string) string {
	return MacroPrefix(id, macro) + "committed/" + aggregator
}

// DisclosedKey is where aggregator keeps its disclosed aggregate of
// MacroJob macro of job id (DisclosedType).
func DisclosedKey(id jobs.ID, macro uint64, aggregator string) string {
	return MacroPrefix(id, macro) + "disclosed/" + aggregator
}

// AdvertKey is the store key of a processor's advertisement.
func AdvertKey(peerID string) string { return NodesPrefix + "/" + peerID }

// WalletBindingKey is where peerID's wallet binding lives: under its
// advertisement's key, so only peerID may write it.
func WalletBindingKey(peerID string) string { return AdvertKey(peerID) + "/wallet" }

// Key is a parsed store key: the record type the layout keeps under it
// and the fields it names. Fields a key does not name are zero.
type Key struct {
	// Type is the record type stored under the key (JobType, VerdictType,
	// CommitType, AdvertType, ...).
	Type string
	// Job is the job of every key under JobsPrefix.
	Job jobs.ID
	// Macro is the MacroJob index of room, took, aggregate, commit and
	// result keys.
	Macro uint64
	// Micro is the MicroJob of commit, result and redo keys.
	Micro jobs.ID
	// Block is the block of dispute, re-run and check keys.
	Block uint64
	// Peer is the peer a key ends with, in canonical text: the author of
	// a verdict, dispute, check or redo, the processor of a re-run,
	// signature, commitment or disclosure, the holder, the chooser of a
	// group, the processor of a took record, the writer of an aggregate,
	// the advertised node.
	Peer string
}

// String returns the key text.
func (k Key) String() string {
	switch k.Type {
	case JobType:
		return JobKey(k.Job)
	case VerdictType:
		return VerdictKey(k.Job, k.Peer)
	case DisputeType:
		return DisputeKey(k.Job, k.Block, k.Peer)
	case RerunType:
		return RerunKey(k.Job, k.Block, k.Peer)
	case CheckType:
		return CheckKey(k.Job, k.Block, k.Peer)
	case RedoType:
		return RedoKey(k.Job, k.Micro, k.Peer)
	case CancelType:
		return CancelKey(k.Job)
	case RevealType:
		return RevealKey(k.Job, k.Peer)
	case AbortedType:
		return AbortedKey(k.Job)
	case FailureType:
		return FailureKey(k.Job, k.Peer)
	case SettlementType:
		return SettlementKey(k.Job)
	case SignatureType:
		return SignatureKey(k.Job, k.Peer)
	case SettledType:
		return SettledKey(k.Job)
	case SummaryType:
		return SummaryKey(k.Job, k.Peer)
	case AskType:
		return AskKey(k.Job, k.Peer)
	case HolderType:
		return HoldersPrefix(k.Job) + k.Peer
	case GroupType:
		return GroupKey(k.Job, k.Peer)
	case RoomLockType:
		return RoomLockKey(k.Job.String(), k.Macro)
	case TookType:
		return TookKey(k.Job, k.Macro, k.Peer)
	case CommittedType:
		return CommittedKey(k.Job, k.Macro, k.Peer)
	case DisclosedType:
		return DisclosedKey(k.Job, k.Macro, k.Peer)
	case CommitType:
		return CommitKey(k.Job, k.Macro, k.Micro, k.Peer)
	case ResultType:
		return ResultKey(k.Job, k.Macro, k.Micro, k.Peer)
	case AdvertType:
		return AdvertKey(k.Peer)
	case WalletBindingType:
		return WalletBindingKey(k.Peer)
	}
	return ""
}

// JobOf returns the job a key under JobsPrefix belongs to: the job's own
// record or any record under it, whatever its kind.
func JobOf(key string) (jobs.ID, bool) {
	id, _, ok := splitJob(key)
	return id, ok
}

// splitJob cuts a key under JobsPrefix into its job and the segments
// after it (nil for the job's own record).
func splitJob(key string) (jobs.ID, []string, bool) {
	rest, ok := strings.CutPrefix(key, JobsPrefix+"/")
	if !ok {
		return jobs.ID{}, nil, false
	}
	idText, sub, more := strings.Cut(rest, "/")
	id, err := jobs.ParseHash(idText)
	if err != nil {
		return jobs.ID{}, nil, false
	}
	if !more {
		return id, nil, true
	}
	return id, strings.Split(sub, "/"), true
}

// Parse parses a key of the layout (see the package doc): ErrKey if it is
// not one, in its one canonical form (IDs in 64 lowercase hex digits,
// numbers in decimal without leading zeros, peers in canonical text).
func Parse(key string) (Key, error) {
	k, err := parse(key)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %q: %w", ErrKey, key, err)
	}
	if k.String() != key {
		return Key{}, fmt.Errorf("%w: %q is not canonical", ErrKey, key)
	}
	return k, nil
}

// errLayout: the key's segments are none of the layout's.
var errLayout = errors.New("not a key of the layout")

func parse(key string) (Key, error) {
	if rest, ok := strings.CutPrefix(key, NodesPrefix+"/"); ok {
		return parseNode(strings.Split(rest, "/"))
	}
	id, sub, ok := splitJob(key)
	if !ok {
		return Key{}, errLayout
	}
	k := Key{Job: id}
	if len(sub) == 0 {
		k.Type = JobType
		return k, nil
	}
	return k, parseUnderJob(&k, sub)
}

// parseNode parses the segments after NodesPrefix.
func parseNode(s []string) (Key, error) {
	switch {
	case len(s) == 1:
		return Key{Type: AdvertType, Peer: s[0]}, checkPeer(s[0])
	case len(s) == 2 && s[1] == "wallet":
		return Key{Type: WalletBindingType, Peer: s[0]}, checkPeer(s[0])
	}
	return Key{}, errLayout
}

// jobLevel are the kinds of record a job has one of, keyed by their
// segment.
var jobLevel = map[string]string{
	"cancel": CancelType, "aborted": AbortedType, "settlement": SettlementType, "settled": SettledType,
}

// perPeer are the kinds of record a job has one of per peer, keyed by
// their segment.
var perPeer = map[string]string{
	"verdict": VerdictType, "signature": SignatureType, "holders": HolderType, "group": GroupType,
	"reveal": RevealType, "failure": FailureType, "summary": SummaryType, "ask": AskType,
}

// perMacroPeer are the kinds of record a MacroJob has one of per peer,
// keyed by their segment.
var perMacroPeer = map[string]string{"took": TookType, "committed": CommittedType, "disclosed": DisclosedType}

// parseUnderJob fills k from the segments after a job's key.
func parseUnderJob(k *Key, s []string) error {
	var err error
	switch {
	case len(s) == 1 && jobLevel[s[0]] != "":
		k.Type = jobLevel[s[0]]
		return nil
	case len(s) == 2 && perPeer[s[0]] != "":
		k.Type, k.Peer = perPeer[s[0]], s[1]
	case len(s) == 3 && (s[0] == "dispute" || s[0] == "check"):
		k.Type, k.Peer = map[string]string{"dispute": DisputeType, "check": CheckType}[s[0]], s[2]
		k.Block, err = strconv.ParseUint(s[1], 10, 64)
	case len(s) == 4 && s[0] == "dispute" && s[2] == "rerun":
		k.Type, k.Peer = RerunType, s[3]
		k.Block, err = strconv.ParseUint(s[1], 10, 64)
	case len(s) == 3 && s[0] == "redo":
		k.Type, k.Peer = RedoType, s[2]
		k.Micro, err = jobs.ParseHash(s[1])
	case len(s) == 3 && s[0] == "macro" && s[2] == "room":
		k.Type = RoomLockType
		k.Macro, err = strconv.ParseUint(s[1], 10, 64)
		return err
	case len(s) == 4 && s[0] == "macro" && perMacroPeer[s[2]] != "":
		k.Type, k.Peer = perMacroPeer[s[2]], s[3]
		k.Macro, err = strconv.ParseUint(s[1], 10, 64)
	case len(s) == 6 && s[0] == "macro" && s[2] == "micro" && (s[4] == CommitType || s[4] == ResultType):
		return parseMicro(k, s)
	default:
		return errLayout
	}
	if err != nil {
		return err
	}
	return checkPeer(k.Peer)
}

// parseMicro fills k from the segments of a commit or result key:
// macro/<index>/micro/<MicroJob ID>/<type>/<processor>.
func parseMicro(k *Key, s []string) error {
	var err error
	if k.Macro, err = strconv.ParseUint(s[1], 10, 64); err != nil {
		return fmt.Errorf("macro: %w", err)
	}
	if k.Micro, err = jobs.ParseHash(s[3]); err != nil {
		return fmt.Errorf("micro: %w", err)
	}
	k.Type, k.Peer = s[4], s[5]
	return checkPeer(k.Peer)
}

// checkPeer accepts only the canonical text of a libp2p peer ID.
func checkPeer(s string) error {
	ok, err := peertext.Canonical(s)
	if err != nil {
		return fmt.Errorf("peer %q: %w", s, err)
	}
	if !ok {
		return fmt.Errorf("peer %q is not in canonical form", s)
	}
	return nil
}
