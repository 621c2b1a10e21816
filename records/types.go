package records

// Record types: the type each key of the layout holds (see the package
// doc), in crdt.Record.Type.
const (
	// JobType records hold a canonical jobs.JobInfo under JobKey.
	JobType = "job"
	// VerdictType records hold a VerdictRecord under VerdictKey.
	VerdictType = "verdict"
	// DisputeType records ask Third to re-run one disputed block.
	DisputeType = "dispute"
	// RerunType records hold a re-runner's hash of a block.
	RerunType = "rerun"
	// CheckType records ask two processors to re-run a self-checked block.
	CheckType = "check"
	// RedoType records ask for a MicroJob to be run again by someone who
	// is not a culprit.
	RedoType = "redo"
	// RevealType records hold a RevealRecord under RevealKey.
	RevealType = "reveal"
	// CancelType records hold a CancelRecord under CancelKey.
	CancelType = "cancel"
	// AbortedType records hold a JobAborted under AbortedKey.
	AbortedType = "aborted"
	// FailureType records hold a FailureReport under FailureKey.
	FailureType = "failure"
	// SettlementType records hold a SettlementRecord under SettlementKey:
	// the settlement the finalizer proposes for signing.
	SettlementType = "settlement"
	// SignatureType records hold one member's escrow.SignedSettlement
	// (its version 2 wire format) under SignatureKey.
	SignatureType = "settlesig"
	// SettledType records hold a SettledRecord under SettledKey once the
	// settle transaction succeeded.
	SettledType = "settled"
	// SummaryType records hold a SummaryRecord under SummaryKey: a job's
	// outcome, for the nodes that do not hold its records.
	SummaryType = "summary"
	// AskType records hold an Ask under AskKey: the processors a
	// requester asked to re-run blocks of a job, so that they join its
	// store.
	AskType = "ask"
	// HolderType records hold a Holder under HolderKey.
	HolderType = "holder"
	// GroupType records hold a Group under GroupKey.
	GroupType = "group"
	// RoomLockType records hold a RoomLock under RoomLockKey.
	RoomLockType = "room"
	// TookType records under TookKey say that their author took MicroJobs
	// of the MacroJob: their payload is empty, their key and signed author
	// are the evidence.
	TookType = "took"
	// CommittedType records under CommittedKey carry a MacroJob's took
	// records and commitments (crdt.EncodeCarried), exactly as their
	// authors signed them (Carriage).
	CommittedType = "committed"
	// DisclosedType records under DisclosedKey carry a MacroJob's took
	// records, commitments and disclosures, like CommittedType.
	DisclosedType = "disclosed"
	// CommitType records hold a microjob.Commitment under CommitKey.
	CommitType = "commit"
	// ResultType records hold a microjob.Disclosure under ResultKey.
	ResultType = "result"
	// AdvertType records hold a processor's advertisement under AdvertKey.
	AdvertType = "node"
	// WalletBindingType records hold a WalletBinding under
	// WalletBindingKey.
	WalletBindingType = "wallet"
)
