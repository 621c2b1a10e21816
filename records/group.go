package records

import (
	"fmt"
	"slices"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
)

// A replicated job (jobs.Requirements.Replicas R > 1) is run by a group of
// R processors of one card model, which the first processor to take the
// job chooses and writes under GroupKey.

// GroupVersion is the Group schema version.
const GroupVersion = 1

// Group names the R processors of one card model that run a replicated
// job.
type Group struct {
	Version   uint32   `json:"version"`   // GroupVersion
	Job       string   `json:"job"`       // the job ID, lowercase hex
	CardModel string   `json:"cardModel"` // every member's card model
	Members   []string `json:"members"`   // R peer IDs, sorted, distinct
	Chooser   string   `json:"chooser"`   // who chose it: the record's author
	// Round is 0 for the first choice; a record that replaces silent
	// members of the round before has that round plus one.
	Round uint32 `json:"round"`
	// Dropped are the members replaced in rounds 1..Round, sorted; empty
	// in round 0.
	Dropped []string `json:"dropped,omitempty"`
}

// Has reports whether p is a member.
func (g Group) Has(p string) bool {
	_, ok := slices.BinarySearch(g.Members, p)
	return ok
}

// DecodeGroup decodes and checks a group record of info's job read from
// key and written by author (size limit MaxRecord, no unknown fields).
func DecodeGroup(info *jobs.JobInfo, key, author string, b []byte) (Group, error) {
	var g Group
	if err := decodeStrict(b, &g); err != nil {
		return g, err
	}
	id := info.ID()
	r := int(info.Requirements.Replicas)
	switch {
	case g.Version != GroupVersion:
		return g, fmt.Errorf("%w: group version %d", ErrBadRecord, g.Version)
	case g.Job != id.String():
		return g, fmt.Errorf("%w: group of job %q under job %s", ErrBadRecord, g.Job, id)
	case g.Chooser != author || key != GroupKey(id, author):
		return g, fmt.Errorf("%w: group by %q written by %s under %q", ErrBadRecord, g.Chooser, author, key)
	case g.CardModel == "" || len(g.CardModel) > dispatch.MaxIDLen:
		return g, fmt.Errorf("%w: group card model of %d bytes", ErrBadRecord, len(g.CardModel))
	case info.Requirements.GPUModel != "" && g.CardModel != info.Requirements.GPUModel:
		return g, fmt.Errorf("%w: group of card model %q, the job requires %q", ErrBadRecord, g.CardModel, info.Requirements.GPUModel)
	case len(g.Members) != r:
		return g, fmt.Errorf("%w: group of %d members, the job asks for %d", ErrBadRecord, len(g.Members), r)
	}
	if err := sortedIDs("group members", g.Members); err != nil {
		return g, err
	}
	if err := sortedIDs("dropped members", g.Dropped); err != nil {
		return g, err
	}
	switch {
	case len(g.Dropped) > maxDropped:
		return g, fmt.Errorf("%w: group drops %d members, at most %d", ErrBadRecord, len(g.Dropped), maxDropped)
	case (g.Round == 0) != (len(g.Dropped) == 0) || int(g.Round) > len(g.Dropped):
		return g, fmt.Errorf("%w: group round %d drops only %d members", ErrBadRecord, g.Round, len(g.Dropped))
	}
	for _, d := range g.Dropped {
		if g.Has(d) {
			return g, fmt.Errorf("%w: dropped member %s is still a member", ErrBadRecord, d)
		}
	}
	return g, nil
}

// maxDropped bounds the members a job's group may replace over its life.
const maxDropped = 64

func sortedIDs(what string, ids []string) error {
	for i, m := range ids {
		if m == "" || len(m) > dispatch.MaxIDLen {
			return fmt.Errorf("%w: %s: ID of %d bytes", ErrBadRecord, what, len(m))
		}
		if i > 0 && ids[i-1] >= m {
			return fmt.Errorf("%w: %s not sorted and distinct", ErrBadRecord, what)
		}
	}
	return nil
}
