package macrojob

import (
	"flag"
	"fmt"
	"github.com/jobmesh/jobmesh/internal/scripttest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata scripts")

// TestScripts runs the scripts in testdata/*.txt. A script is a list of
// cases: a command line, a line "----", then the expected output up to a
// blank line. Lines starting with # are comments. Run with -update to
// rewrite the expected output.
//
// Commands:
//
//	new peers=a,b,c items=m1,m2 [creator=a] [m=1] [proc=10m] [owner=30s] [rebroadcast=5s]
//	request <peer>             the peer wants work
//	complete <peer> <item>     the peer finished a MicroJob
//	learn <peer> <item,...>    the peer found the MicroJobs committed in the store
//	tick <duration>            advance queue time, tick every live peer
//	deliver [from=p,..] [to=p,..]  deliver the matching in-flight messages once
//	drop [from=p,..] [to=p,..]     drop the matching in-flight messages
//	stabilize                  deliver until nothing is in flight
//	run <duration> [step=1s]   tick every step and stabilize, printing each line once
//	crash <peer>               the peer stops; messages to it are lost
//	partition a,b c,d          split the network; heal joins it again
//	state [peer]               print the views
//	outstanding [peer]         print whether each peer still re-sends something
func TestScripts(t *testing.T) {
	scripttest.RunAll(t, "testdata/*.txt", *update, func(t *testing.T) func(string) string {
		s := &script{t: t}
		return func(cmd string) string {
			if out := s.run(cmd); out != "" {
				return out
			}
			return "ok"
		}
	})
}

type envelope struct {
	from, to PeerID
	wire     []byte
}

type script struct {
	t       *testing.T
	now     time.Time
	names   []PeerID
	qs      map[PeerID]*Queue
	flight  []envelope
	crashed map[PeerID]bool
	group   map[PeerID]int // partition group; all 0 when healed
	out     []string
	dedupe  map[string]bool // set while a run command prints each line once
}

func (s *script) printf(format string, args ...any) {
	l := fmt.Sprintf(format, args...)
	if s.dedupe != nil {
		if s.dedupe[l] {
			return
		}
		s.dedupe[l] = true
		l = fmt.Sprintf("%s: %s", s.now.Sub(t0), l)
	}
	s.out = append(s.out, l)
}

func (s *script) run(cmd string) string {
	s.out = nil
	f := strings.Fields(cmd)
	args := map[string]string{}
	var pos []string
	for _, a := range f[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			args[k] = v
		} else {
			pos = append(pos, a)
		}
	}
	switch f[0] {
	case "new":
		s.cmdNew(args)
	case "request":
		q := s.peer(pos[0])
		before := capture(q, &view{})
		s.publish(PeerID(pos[0]), q.Request(s.now))
		s.check(pos[0], before)
	case "complete":
		q := s.peer(pos[0])
		before := capture(q, &view{})
		msgs, err := q.Complete(ID(pos[1]), s.now)
		if err != nil {
			s.printf("%s ! %v", pos[0], err)
		}
		s.publish(PeerID(pos[0]), msgs)
		s.check(pos[0], before)
	case "learn":
		q := s.peer(pos[0])
		before := capture(q, &view{})
		var ids []ID
		for _, id := range strings.Split(pos[1], ",") {
			ids = append(ids, ID(id))
		}
		msgs, err := q.Learn(ids, s.now)
		if err != nil {
			s.printf("%s ! %v", pos[0], err)
		}
		s.publish(PeerID(pos[0]), msgs)
		s.check(pos[0], before)
	case "tick":
		d, err := time.ParseDuration(pos[0])
		if err != nil {
			s.t.Fatal(err)
		}
		s.now = s.now.Add(d)
		s.tickAll()
	case "run":
		s.cmdRun(pos, args)
	case "deliver", "drop":
		s.cmdDeliver(f[0], args)
	case "stabilize":
		s.stabilize()
	case "crash":
		s.crashed[PeerID(pos[0])] = true
	case "partition":
		for p := range s.group {
			s.group[p] = 0
		}
		for g, list := range pos {
			for _, p := range strings.Split(list, ",") {
				s.group[PeerID(p)] = g + 1
			}
		}
	case "heal":
		for p := range s.group {
			s.group[p] = 0
		}
	case "outstanding":
		for _, p := range s.names {
			if len(pos) > 0 && !slices.Contains(pos, string(p)) {
				continue
			}
			s.printf("%s: outstanding=%v", p, s.qs[p].Outstanding())
		}
	case "state":
		for _, p := range s.names {
			if len(pos) > 0 && !slices.Contains(pos, string(p)) {
				continue
			}
			s.printf("%s", describeQueue(string(p), s.qs[p]))
		}
	default:
		s.t.Fatalf("unknown command %q", cmd)
	}
	s.printReady()
	return strings.Join(s.out, "\n")
}

// tickAll ticks every live processor's queue at the script's time.
func (s *script) tickAll() {
	for _, p := range s.names {
		if s.crashed[p] {
			continue
		}
		before := capture(s.qs[p], &view{})
		s.publish(p, s.qs[p].Tick(s.now))
		s.check(string(p), before)
	}
}

// cmdRun runs "run DURATION [step=DURATION]".
func (s *script) cmdRun(pos []string, args map[string]string) {
	// A live network: tick every step and deliver everything in
	// between. Repeated messages print once.
	d, err := time.ParseDuration(pos[0])
	if err != nil {
		s.t.Fatal(err)
	}
	step := time.Second
	if v, ok := args["step"]; ok {
		if step, err = time.ParseDuration(v); err != nil {
			s.t.Fatal(err)
		}
	}
	s.dedupe = map[string]bool{}
	for end := s.now.Add(d); s.now.Before(end); {
		s.now = s.now.Add(step)
		s.tickAll()
		s.stabilize()
	}
	s.dedupe = nil
}

// cmdDeliver runs "deliver" or "drop" (cmd) [from=P,...] [to=P,...] on the
// messages in flight.
func (s *script) cmdDeliver(cmd string, args map[string]string) {
	from, to := peerSet(args["from"]), peerSet(args["to"])
	var keep, take []envelope
	for _, e := range s.flight {
		if (from == nil || from[e.from]) && (to == nil || to[e.to]) {
			take = append(take, e)
		} else {
			keep = append(keep, e)
		}
	}
	s.flight = keep
	if cmd == "deliver" {
		s.deliver(take)
	} else {
		s.printf("dropped %d", len(take))
	}
}

func (s *script) printReady() {
	for _, p := range s.names {
		if r := s.qs[p].Ready(); len(r) > 0 {
			s.printf("%s ready %v", p, r)
		}
	}
}

func (s *script) stabilize() {
	for i := 0; len(s.flight) > 0; i++ {
		if i == 100 {
			s.t.Fatalf("not stable after 100 rounds")
		}
		take := s.flight
		s.flight = nil
		s.deliver(take)
	}
	s.printReady()
}

func peerSet(list string) map[PeerID]bool {
	if list == "" {
		return nil
	}
	m := map[PeerID]bool{}
	for _, p := range strings.Split(list, ",") {
		m[PeerID(p)] = true
	}
	return m
}

func (s *script) peer(name string) *Queue {
	q, ok := s.qs[PeerID(name)]
	if !ok {
		s.t.Fatalf("unknown peer %q", name)
	}
	return q
}

func (s *script) cmdNew(args map[string]string) {
	cfg := DefaultConfig()
	dur := func(k string, d *time.Duration) {
		if v, ok := args[k]; ok {
			var err error
			if *d, err = time.ParseDuration(v); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	dur("proc", &cfg.ProcessingTimeout)
	dur("owner", &cfg.OwnerTimeout)
	dur("rebroadcast", &cfg.Rebroadcast)
	if v, ok := args["m"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			s.t.Fatal(err)
		}
		cfg.MaxLocksPerTurn = n
	}
	s.now = t0
	s.qs = map[PeerID]*Queue{}
	s.crashed = map[PeerID]bool{}
	s.group = map[PeerID]int{}
	s.flight = nil
	s.names = nil
	var items []ID
	for _, it := range strings.Split(args["items"], ",") {
		items = append(items, ID(it))
	}
	peers := strings.Split(args["peers"], ",")
	creator := PeerID(peers[0])
	if c, ok := args["creator"]; ok {
		creator = PeerID(c)
	}
	for _, p := range peers {
		q, err := New(cfg, Params{Self: PeerID(p), Room: "room1", Items: items, Creator: creator}, s.now)
		if err != nil {
			s.t.Fatal(err)
		}
		s.names = append(s.names, PeerID(p))
		s.qs[PeerID(p)] = q
		s.group[PeerID(p)] = 0
	}
}

// publish prints msgs and puts one envelope per reachable peer in flight.
func (s *script) publish(from PeerID, msgs []Msg) {
	for _, m := range msgs {
		s.printf("%s > %s", from, describe(m))
		b, err := Encode(m)
		if err != nil {
			s.t.Fatalf("encode: %v", err)
		}
		for _, to := range s.names {
			if to != from && s.group[to] == s.group[from] {
				s.flight = append(s.flight, envelope{from: from, to: to, wire: b})
			}
		}
	}
}

func (s *script) deliver(envs []envelope) {
	for _, e := range envs {
		if s.crashed[e.to] || s.crashed[e.from] {
			continue
		}
		m, err := Decode(e.wire)
		if err != nil {
			s.t.Fatalf("decode: %v", err)
		}
		q := s.qs[e.to]
		before := capture(q, &view{})
		msgs, err := q.Receive(e.from, m, s.now)
		if err != nil {
			s.printf("%s ! %v", e.to, err)
		}
		s.publish(e.to, msgs)
		s.check(string(e.to), before)
	}
}

func (s *script) check(name string, before *view) {
	if err := checkStep(before, capture(s.qs[PeerID(name)], &view{}), s.now); err != nil {
		s.t.Errorf("%s: invariant: %v", name, err)
	}
}
