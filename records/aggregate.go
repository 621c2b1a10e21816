package records

import (
	"fmt"
	"slices"

	"github.com/jobmesh/jobmesh/crdt"
)

// carriable is what each aggregate may carry: a committed aggregate its
// MacroJob's took records and commitments, a disclosed aggregate its took
// records, commitments (the verifier's) and disclosures.
var carriable = map[string][]string{
	CommittedType: {TookType, CommitType},
	DisclosedType: {TookType, CommitType, ResultType},
}

// Carriage is a job store's carriage (crdt.Carriage): a MacroJob's
// aggregates carry only the records carriable names of the same job and
// MacroJob. Each carried record is still checked against its own
// author's key and the store's author policy, so an aggregate proves
// nothing of its own: its writer can leave records out, never forge,
// alter or move one.
func Carriage() *crdt.Carriage {
	return &crdt.Carriage{Types: []string{CommittedType, DisclosedType}, Policy: CarriedBy}
}

// IsAggregate reports whether key is a MacroJob aggregate's (CommittedKey,
// DisclosedKey): a record whose payload is other records' envelopes, which
// a reader of the job's records reads as those records (crdt.Carriage),
// never as itself; a whole-job read leaves it out (crdt.Replicated
// QueryKeys) rather than decode its MacroJob's envelopes once more.
func IsAggregate(key string) bool {
	k, err := Parse(key)
	return err == nil && (k.Type == CommittedType || k.Type == DisclosedType)
}

// NotAggregate is IsAggregate's opposite, a QueryKeys keep func.
func NotAggregate(key string) bool { return !IsAggregate(key) }

// CarriedBy returns nil when the record under carrier, an aggregate, may
// carry the record under inner.
func CarriedBy(carrier, inner string) error {
	c, err := Parse(carrier)
	if err != nil {
		return err
	}
	kinds, ok := carriable[c.Type]
	if !ok {
		return fmt.Errorf("%w: %q is not an aggregate", ErrKey, carrier)
	}
	i, err := Parse(inner)
	if err != nil {
		return err
	}
	if !slices.Contains(kinds, i.Type) {
		return fmt.Errorf("%w: a %s aggregate does not carry %s records", ErrKey, c.Type, i.Type)
	}
	if i.Job != c.Job || i.Macro != c.Macro {
		return fmt.Errorf("%w: %q is not of the aggregate's job and MacroJob", ErrKey, inner)
	}
	return nil
}
