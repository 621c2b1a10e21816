package records

import (
	"fmt"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
)

// authoredKinds are the job-level key segments under which the last
// segment of every key is its author: the records that decide a job's
// outcome (verdict, dispute with its re-runs, check, redo and failure
// report), the reveal of its check seed, the outcome summary and the ask
// record.
var authoredKinds = map[string]bool{"verdict": true, "dispute": true, "check": true, "redo": true, "reveal": true, "failure": true, "summary": true, "ask": true}

// keyAuthor returns the author a key under /jobs/<id>/<kind>/ names (its
// last segment), and whether the key is one of those.
func keyAuthor(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, JobsPrefix+"/")
	if !ok || len(rest) < 65 || rest[64] != '/' {
		return "", false
	}
	kind, _, _ := strings.Cut(rest[65:], "/")
	if !authoredKinds[kind] {
		return "", false
	}
	return key[strings.LastIndexByte(key, '/')+1:], true
}

// AuthorPolicy is the store's author rule: keys under NodesPrefix are
// written only by the peer they name (crdt.OwnerPolicy); result records
// only by the processor they name (ResultPolicy); verdicts, disputes,
// re-runs, checks, redos, failure reports, summaries, asks, settlement signatures, took,
// aggregate and holder records only
// by the peer their key ends with; probe records only by their challenger
// or answering member (probePolicy). The rule reads keys only, so it holds
// for any key of those shapes, whether it parses or not; under
// probe.Prefix a key that does not parse is refused.
func AuthorPolicy() crdt.AuthorPolicy {
	owner := crdt.OwnerPolicy(NodesPrefix)
	return func(key string, author peer.ID) error {
		if err := owner(key, author); err != nil {
			return err
		}
		if err := ResultPolicy(key, author); err != nil {
			return err
		}
		if a, ok := keyAuthor(key); ok && a != author.String() {
			return fmt.Errorf("%q (verdict, dispute, re-run, check, redo, failure, reveal, summary or ask) written by %s", key, author)
		}
		if i := strings.Index(key, "/signature/"); i >= 0 && strings.HasPrefix(key, JobsPrefix+"/") {
			if key[i+len("/signature/"):] != author.String() {
				return fmt.Errorf("settlement signature %q written by %s", key, author)
			}
		}
		if err := tookPolicy(key, author); err != nil {
			return err
		}
		if err := probePolicy(key, author); err != nil {
			return err
		}
		return holderPolicy(key, author)
	}
}

// tookPolicy: a took record (/jobs/<job>/macro/<m>/took/<peer>) and an
// aggregate (.../committed/<peer>, .../disclosed/<peer>) are written by
// the peer they name, so no one erases another's evidence.
func tookPolicy(key string, author peer.ID) error {
	s := strings.Split(key, "/")
	if len(s) == 7 && s[0] == "" && "/"+s[1] == JobsPrefix && s[3] == "macro" && perMacroPeer[s[5]] != "" && s[6] != author.String() {
		return fmt.Errorf("%s record %q written by %s", s[5], key, author)
	}
	return nil
}

// holderPolicy: a holder record is written by the peer it names.
func holderPolicy(key string, author peer.ID) error {
	rest, ok := strings.CutPrefix(key, JobsPrefix+"/")
	if !ok {
		return nil
	}
	if i := strings.Index(rest, "/holders/"); i >= 0 && rest[i+len("/holders/"):] != author.String() {
		return fmt.Errorf("holder record %q written by %s", key, author)
	}
	return nil
}
