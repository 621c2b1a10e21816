package records_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

// revealJob is a job of creator whose seed commitment is secret's.
func revealJob(t testing.TB, creator jobs.Address, secret jobs.Seed) *jobs.JobInfo {
	t.Helper()
	info := recordstest.CancelJob(t, creator)
	info.SeedCommitment = jobs.CommitSeed(secret)
	return info
}

// TestRevealCountsOnlyFromTheCreatorWithTheCommittedSeed: the creator's
// signed reveal of the committed seed counts; a seed that does not match
// the commitment, a reveal signed by another wallet, one moved to another
// job, and malformed payloads do not, each with its reason.
func TestRevealCountsOnlyFromTheCreatorWithTheCommittedSeed(t *testing.T) {
	key, _ := ethcrypto.GenerateKey()
	other, _ := ethcrypto.GenerateKey()
	secret := jobs.Seed{42}
	info := revealJob(t, jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)), secret)
	rec, err := records.SignReveal(info.ID(), secret, key)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := records.CheckReveal(info, rec); err != nil || got != secret {
		t.Fatalf("the creator's reveal: %v, %v", got, err)
	}
	wrong, _ := records.SignReveal(info.ID(), jobs.Seed{43}, key)
	if _, err := records.CheckReveal(info, wrong); !errors.Is(err, records.ErrRevealMismatch) {
		t.Fatalf("a seed that does not match the commitment: %v", err)
	}
	forged, _ := records.SignReveal(info.ID(), secret, other)
	if _, err := records.CheckReveal(info, forged); !errors.Is(err, records.ErrRevealAuthor) {
		t.Fatalf("a reveal signed by another wallet: %v", err)
	}
	otherJob := revealJob(t, info.Creator, secret)
	otherJob.Deadline++
	moved := bytes.Replace(rec, []byte(info.ID().String()), []byte(otherJob.ID().String()), 1)
	if _, err := records.CheckReveal(otherJob, moved); !errors.Is(err, records.ErrRevealAuthor) {
		t.Fatalf("a signature moved to another job: %v", err)
	}
	if _, err := records.CheckReveal(otherJob, rec); !errors.Is(err, records.ErrBadReveal) {
		t.Fatalf("a reveal of another job: %v", err)
	}
	upper := bytes.Replace(rec, []byte(secret.String()), []byte(strings.ToUpper(secret.String())), 1)
	for _, bad := range [][]byte{nil, []byte(`{}`), upper, []byte(`{"job":"a","seed":"b","signature":"c","extra":1}`),
		append(bytes.Clone(rec), 'x'), bytes.Repeat([]byte("a"), 2000)} {
		if _, err := records.CheckReveal(info, bad); !errors.Is(err, records.ErrBadReveal) {
			t.Errorf("accepted %q: %v", bad, err)
		}
	}
}

func TestRevealKeyIsTheAuthors(t *testing.T) {
	id := jobs.ID{1}
	author := newPeer(t)
	key := records.RevealKey(id, author.String())
	k, err := records.Parse(key)
	if err != nil || k.Type != records.RevealType || k.Peer != author.String() || k.Job != id {
		t.Fatalf("Parse(%q) = %+v, %v", key, k, err)
	}
	policy := records.AuthorPolicy()
	if err := policy(key, author); err != nil {
		t.Fatalf("the author's own reveal key: %v", err)
	}
	if err := policy(key, newPeer(t)); err == nil {
		t.Fatal("another peer may write a reveal under its author's key")
	}
}

func FuzzDecodeReveal(f *testing.F) {
	key, _ := ethcrypto.GenerateKey()
	info := revealJob(f, jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)), jobs.Seed{1})
	rec, _ := records.SignReveal(info.ID(), jobs.Seed{1}, key)
	f.Add(rec)
	f.Add([]byte(`{"job":"","seed":"","signature":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := records.DecodeReveal(b)
		if err != nil {
			return
		}
		if len(b) > 1<<10 {
			t.Fatalf("decoded %d bytes, over the limit", len(b))
		}
		if _, err := records.CheckReveal(info, b); err == nil && r.Job != info.ID().String() {
			t.Fatalf("a reveal of job %q counts for %s", r.Job, info.ID())
		}
	})
}
