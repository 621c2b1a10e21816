package records

import (
	"fmt"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/microjob"
)

// RoundOrder is one MacroJob's two submission rounds (seed 003) as the
// finalizer saw them: the processors in commitment order and in disclosure
// order. The verdict record carries one per MacroJob, so that the QoS
// ledger and the fee split of every node read the same order instead of
// deriving it from records that may not have replicated alike.
type RoundOrder struct {
	// Macro is the MacroJob index.
	Macro uint64 `json:"macro"`
	// Commits are the processors (peer IDs) that committed a MicroJob of
	// the MacroJob, earliest first; at most dispatch.MaxTaskProcessors.
	Commits []string `json:"commits"`
	// Disclosures are the committers that disclosed, earliest first.
	Disclosures []string `json:"disclosures"`
	// Lockers are the processors with a took record (TookKey) in the
	// MacroJob that committed none of its MicroJobs: they took work and
	// timed out (seed 003). Commits and Lockers together are at most
	// dispatch.MaxTaskProcessors; committers come first, lockers fill the
	// places left, earliest took record first (seq, then peer ID). Every
	// reader derives them from the took records and refuses a verdict
	// that names others, so a finalizer cannot frame a processor.
	Lockers []string `json:"lockers,omitempty"`
}

// maxPeerIDLen bounds a peer ID in a round (a libp2p peer ID in text is
// 46 to 59 characters; dispatch caps IDs at dispatch.MaxIDLen).
const maxPeerIDLen = dispatch.MaxIDLen

// CheckRounds checks the rounds of a verdict record: MacroJob indices
// strictly ascending and each one a MacroJob the verdict accepted verifier
// hashes for (a verified verdict has them for every MacroJob of the plan,
// so the rounds stay within the plan); in each round at least one and at
// most dispatch.MaxTaskProcessors committers, every peer ID non-empty,
// bounded and listed once per round, and only committers disclosing;
// lockers non-empty, bounded, listed once, none a committer, and with the
// committers at most dispatch.MaxTaskProcessors.
func CheckRounds(rounds []RoundOrder, v microjob.Verdict) error {
	if len(rounds) > len(v.VerifierHashes) {
		return fmt.Errorf("%w: %d rounds, %d MacroJobs", ErrBadRecord, len(rounds), len(v.VerifierHashes))
	}
	for i, r := range rounds {
		if i > 0 && r.Macro <= rounds[i-1].Macro {
			return fmt.Errorf("%w: rounds of MacroJob %d after %d", ErrBadRecord, r.Macro, rounds[i-1].Macro)
		}
		if _, ok := v.VerifierHashes[r.Macro]; !ok {
			return fmt.Errorf("%w: rounds of MacroJob %d, which the verdict does not hold", ErrBadRecord, r.Macro)
		}
		if len(r.Commits) == 0 || len(r.Commits) > dispatch.MaxTaskProcessors || len(r.Disclosures) > len(r.Commits) {
			return fmt.Errorf("%w: MacroJob %d: %d commits, %d disclosures", ErrBadRecord, r.Macro, len(r.Commits), len(r.Disclosures))
		}
		committed := make(map[string]bool, len(r.Commits))
		for _, p := range r.Commits {
			if p == "" || len(p) > maxPeerIDLen || committed[p] {
				return fmt.Errorf("%w: MacroJob %d: committer %q empty, too long or listed twice", ErrBadRecord, r.Macro, p)
			}
			committed[p] = true
		}
		disclosed := make(map[string]bool, len(r.Disclosures))
		for _, p := range r.Disclosures {
			if !committed[p] || disclosed[p] {
				return fmt.Errorf("%w: MacroJob %d: discloser %q did not commit or is listed twice", ErrBadRecord, r.Macro, p)
			}
			disclosed[p] = true
		}
		if err := checkLockers(r, committed); err != nil {
			return err
		}
	}
	return nil
}

func checkLockers(r RoundOrder, committed map[string]bool) error {
	if len(r.Commits)+len(r.Lockers) > dispatch.MaxTaskProcessors {
		return fmt.Errorf("%w: MacroJob %d: %d commits and %d lockers", ErrBadRecord, r.Macro, len(r.Commits), len(r.Lockers))
	}
	seen := map[string]bool{}
	for _, p := range r.Lockers {
		if p == "" || len(p) > maxPeerIDLen || committed[p] || seen[p] {
			return fmt.Errorf("%w: MacroJob %d: locker %q empty, too long, a committer or listed twice", ErrBadRecord, r.Macro, p)
		}
		seen[p] = true
	}
	return nil
}
