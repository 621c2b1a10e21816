package macrojob

import (
	"cmp"
	"fmt"
	"github.com/jobmesh/jobmesh/internal/scripttest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/records"
)

// TestOpenScripts runs the scripts in testdata/open/*.txt against
// DecideOpen, in the format of TestScripts. Times are offsets from the
// script's start. Run with -update to rewrite the expected output.
//
// Commands:
//
//	new [headstart=1s] [patience=0]
//	                            a fresh room: no ranks, lock or claims;
//	                            patience is the processing timeout
//	ranked <at>                 the job's ranks are in use since at
//	first                       this processor is the room's first owner
//	rank <k>                    this processor is k-th in rank after it
//	lock <owner> <expires>      the room's lock record
//	announced <owner>           a recent announcement of the room
//	claim <peer> <rank> <at>    a claim heard from the peer k-th in rank
//	left <n> [<since>]          n MicroJobs of the room have no commitment,
//	                            seen so first at since
//	self <peer>                 this processor's name
//	decide <at>                 print the decision at at; a claim it
//	                            decides is this processor's from then on
func TestOpenScripts(t *testing.T) {
	scripttest.RunAll(t, "testdata/open/*.txt", *update, func(t *testing.T) func(string) string {
		s := &openScript{t: t}
		s.reset(time.Second)
		return s.run
	})
}

// scriptClaim is a claim heard, with the claimant's rank.
type scriptClaim struct {
	peer string
	rank int
	at   time.Time
}

type openScript struct {
	t      *testing.T
	in     OpenInput
	claims []scriptClaim
}

var openEpoch = time.Unix(1_000_000, 0)

func (s *openScript) reset(headStart time.Duration) {
	s.in, s.claims = OpenInput{HeadStart: headStart}, nil
}

func (s *openScript) at(v string) time.Time {
	d, err := time.ParseDuration(v)
	if err != nil {
		s.t.Fatalf("bad time %q: %v", v, err)
	}
	return openEpoch.Add(d)
}

func (s *openScript) since(t time.Time) string { return t.Sub(openEpoch).String() }

func (s *openScript) run(cmd string) string {
	f := strings.Fields(cmd)
	args := func(n int) []string {
		if len(f) != n+1 {
			s.t.Fatalf("%q: want %d arguments", cmd, n)
		}
		return f[1:]
	}
	switch f[0] {
	case "new":
		hs, patience := time.Second, time.Duration(0)
		for _, a := range f[1:] {
			k, v, ok := strings.Cut(a, "=")
			d, err := time.ParseDuration(v)
			if !ok || err != nil || k != "headstart" && k != "patience" {
				s.t.Fatalf("%q: bad argument %q", cmd, a)
			}
			if k == "headstart" {
				hs = d
			} else {
				patience = d
			}
		}
		s.reset(hs)
		s.in.Patience = patience
	case "ranked":
		s.in.Ranked, s.in.RankedAt = true, s.at(args(1)[0])
	case "first":
		args(0)
		s.in.FirstOwner, s.in.Rank = true, 0
	case "rank":
		s.in.FirstOwner, s.in.Rank = false, s.atoi(args(1)[0])
	case "lock":
		a := args(2)
		s.in.Lock = &records.RoomLock{Owner: a[0], Expires: s.at(a[1])}
	case "announced":
		s.in.Announced = args(1)[0]
	case "left":
		if len(f) == 3 {
			s.in.Left, s.in.LeftSince = s.atoi(f[1]), s.at(f[2])
		} else {
			s.in.Left, s.in.LeftSince = s.atoi(args(1)[0]), time.Time{}
		}
	case "self":
		s.in.Self = args(1)[0]
	case "claim":
		a := args(3)
		s.claims = append(s.claims, scriptClaim{a[0], s.atoi(a[1]), s.at(a[2])})
	case "decide":
		return s.decide(s.at(args(1)[0]))
	default:
		s.t.Fatalf("unknown command %q", cmd)
	}
	return "ok"
}

func (s *openScript) atoi(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil {
		s.t.Fatalf("bad number %q: %v", v, err)
	}
	return n
}

// decide runs DecideOpen at now with the claims in rank order, as the
// processor hands them over.
func (s *openScript) decide(now time.Time) string {
	cs := slices.Clone(s.claims)
	slices.SortStableFunc(cs, func(a, b scriptClaim) int { return cmp.Compare(a.rank, b.rank) })
	in := s.in
	in.Now, in.Claims = now, nil
	for _, c := range cs {
		in.Claims = append(in.Claims, RoomClaim{Peer: c.peer, At: c.at, Ahead: c.rank < in.Rank})
	}
	d := DecideOpen(in)
	switch d.Action {
	case OpenJoin:
		return "join " + d.Owner
	case OpenClaim:
		s.in.ClaimedAt = now
		return fmt.Sprintf("claim, decide again at %s", s.since(d.Until))
	case OpenWait:
		if d.Until.IsZero() {
			return "wait for the ranks"
		}
		return "wait until " + s.since(d.Until)
	}
	return d.Action.String()
}
