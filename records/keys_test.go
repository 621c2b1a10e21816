package records_test

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

func TestKeysAndAuthorRule(t *testing.T) {
	self := newPeer(t)
	d, c := sampleDisclosure(t, self.String())
	want := "/jobs/" + d.JobID.String() + "/macro/7/micro/" + d.MicroID.String() + "/commit/" + d.Processor
	ck, dk := records.CommitmentKey(c), records.DisclosureKey(d)
	if ck != want {
		t.Fatalf("key %q, want %q", ck, want)
	}
	k, err := records.Parse(dk)
	if err != nil || k.Type != records.ResultType || k.Peer != d.Processor || k.Macro != 7 || k.Micro != d.MicroID || k.Job != d.JobID {
		t.Fatalf("Parse: %+v, %v", k, err)
	}
	if err := records.CheckAuthor(ck, d.Processor); err != nil {
		t.Fatal(err)
	}
	other := newPeer(t)
	if err := records.CheckAuthor(ck, other.String()); !errors.Is(err, records.ErrAuthor) {
		t.Fatalf("foreign author: %v", err)
	}
	for _, bad := range []string{
		"/jobs/x", strings.Replace(ck, "/macro/7/", "/macro/07/", 1), strings.Replace(ck, "/commit/", "/other/", 1),
		strings.Replace(ck, d.Processor, "nobody", 1), strings.ToUpper(ck), ck + "/",
		// The same peer as a CID: it decodes, but it is not the
		// canonical text, though the canonical one was accepted above.
		strings.Replace(ck, d.Processor, peer.ToCid(self).String(), 1),
	} {
		if _, err := records.Parse(bad); !errors.Is(err, records.ErrKey) {
			t.Errorf("Parse(%q) = %v, want ErrKey", bad, err)
		}
	}
	// The store policy: only record-shaped keys are checked.
	own := k.Peer
	if err := records.ResultPolicy(ck, other); !errors.Is(err, records.ErrAuthor) {
		t.Fatalf("policy let a foreign author write %q: %v", ck, err)
	}
	if err := records.ResultPolicy(dk, newPeerOf(t, own)); err != nil {
		t.Fatal(err)
	}
	if err := records.ResultPolicy("/jobs/"+d.JobID.String(), other); err != nil {
		t.Fatalf("policy refused a key it does not govern: %v", err)
	}
	// Opening records checks key and author against the content.
	if _, err := records.OpenCommitment(ck, c.Processor, c.Encode()); err != nil {
		t.Fatal(err)
	}
	if _, err := records.OpenDisclosure(dk, other.String(), d.Encode()); !errors.Is(err, records.ErrAuthor) {
		t.Fatalf("disclosure by another author: %v", err)
	}
	if _, err := records.OpenDisclosure(ck, d.Processor, d.Encode()); !errors.Is(err, records.ErrKey) {
		t.Fatalf("disclosure under the commit key: %v", err)
	}
}

// TestParseEveryKey: every key the layout builds parses back to the
// fields it was built from, and JobOf names its job.
func TestParseEveryKey(t *testing.T) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	micro := jobs.ID(sha256.Sum256([]byte("micro")))
	p := newPeer(t)
	ps := p.String()
	for _, want := range []records.Key{
		{Type: records.JobType, Job: id},
		{Type: records.VerdictType, Job: id, Peer: ps},
		{Type: records.DisputeType, Job: id, Block: 12, Peer: ps},
		{Type: records.RerunType, Job: id, Block: 12, Peer: ps},
		{Type: records.CheckType, Job: id, Block: 0, Peer: ps},
		{Type: records.RedoType, Job: id, Micro: micro, Peer: ps},
		{Type: records.CancelType, Job: id},
		{Type: records.AbortedType, Job: id},
		{Type: records.SettlementType, Job: id},
		{Type: records.SignatureType, Job: id, Peer: ps},
		{Type: records.SettledType, Job: id},
		{Type: records.HolderType, Job: id, Peer: ps},
		{Type: records.GroupType, Job: id, Peer: ps},
		{Type: records.RoomLockType, Job: id, Macro: 3},
		{Type: records.TookType, Job: id, Macro: 3, Peer: ps},
		{Type: records.CommittedType, Job: id, Macro: 3, Peer: ps},
		{Type: records.DisclosedType, Job: id, Macro: 3, Peer: ps},
		{Type: records.CommitType, Job: id, Macro: 3, Micro: micro, Peer: ps},
		{Type: records.ResultType, Job: id, Macro: 3, Micro: micro, Peer: ps},
		{Type: records.AdvertType, Peer: ps},
		{Type: records.WalletBindingType, Peer: ps},
	} {
		key := want.String()
		got, err := records.Parse(key)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", key, got, err, want)
		}
		if j, ok := records.JobOf(key); ok != (want.Job != jobs.ID{}) || j != want.Job {
			t.Errorf("JobOf(%q) = %s, %v", key, j, ok)
		}
	}
	for key, want := range map[string]string{
		records.VerdictKey(id, ps):          records.VerdictType,
		records.DisputeKey(id, 1, ps):       records.DisputeType,
		records.RerunKey(id, 1, ps):         records.RerunType,
		records.CheckKey(id, 1, ps):         records.CheckType,
		records.RedoKey(id, micro, ps):      records.RedoType,
		records.CancelKey(id):               records.CancelType,
		records.AbortedKey(id):              records.AbortedType,
		records.SettlementKey(id):           records.SettlementType,
		records.SignatureKey(id, ps):        records.SignatureType,
		records.SettledKey(id):              records.SettledType,
		records.HolderKey(id, p):            records.HolderType,
		records.GroupKey(id, ps):            records.GroupType,
		records.RoomLockKey(id.String(), 2): records.RoomLockType,
		records.TookKey(id, 2, ps):          records.TookType,
		records.CommittedKey(id, 2, ps):     records.CommittedType,
		records.DisclosedKey(id, 2, ps):     records.DisclosedType,
		records.AdvertKey(ps):               records.AdvertType,
		records.WalletBindingKey(ps):        records.WalletBindingType,
	} {
		if k, err := records.Parse(key); err != nil || k.Type != want {
			t.Errorf("Parse(%q) = %+v, %v; want type %s", key, k, err, want)
		}
	}
	job := records.JobKey(id)
	for _, bad := range []string{
		"", "/jobs", "/jobs/", job + "/", job + "/verdict", job + "/verdict/", job + "/verdict/x",
		job + "/dispute/01/" + ps, job + "/dispute/1/rerun", job + "/check/-1/" + ps, job + "/redo/x/" + ps,
		job + "/macro/1/room/x", job + "/macro/1/took/x", job + "/macro/01/took/" + ps, job + "/macro/1/committed", job + "/macro/1/disclosed/x", job + "/unknown", "/nodes/" + ps + "/other", "/nodes/", "/other/" + ps,
	} {
		if _, err := records.Parse(bad); !errors.Is(err, records.ErrKey) {
			t.Errorf("Parse(%q) = %v, want ErrKey", bad, err)
		}
	}
	if id2, ok := records.JobOf(job + "/anything/at/all"); !ok || id2 != id {
		t.Errorf("JobOf of a key under the job: %s, %v", id2, ok)
	}
	for _, bad := range []string{"/jobs/x", "/jobsx/" + id.String(), "/nodes/" + ps, strings.ToUpper(job)} {
		if _, ok := records.JobOf(bad); ok {
			t.Errorf("JobOf(%q) named a job", bad)
		}
	}
}

// FuzzParse: a key the parser accepts is the one canonical text of the
// fields it returns, its job is the one JobOf names, and a result record's
// processor may write it.
func FuzzParse(f *testing.F) {
	f.Add("/jobs/" + strings.Repeat("a", 64) + "/macro/3/micro/" + strings.Repeat("b", 64) + "/result/12D3KooWD5thwNMwmmUj6hsgVtbuwiwzdJhES6apABUC6Zhaqqyv")
	f.Add("/jobs/" + strings.Repeat("a", 64) + "/dispute/3/rerun/12D3KooWD5thwNMwmmUj6hsgVtbuwiwzdJhES6apABUC6Zhaqqyv")
	f.Add("/jobs/" + strings.Repeat("a", 64) + "/macro/3/room")
	f.Add("/jobs/" + strings.Repeat("a", 64) + "/macro/3/took/12D3KooWD5thwNMwmmUj6hsgVtbuwiwzdJhES6apABUC6Zhaqqyv")
	f.Add("/nodes/12D3KooWD5thwNMwmmUj6hsgVtbuwiwzdJhES6apABUC6Zhaqqyv/wallet")
	f.Add("/nodes/x")
	f.Fuzz(func(t *testing.T, key string) {
		k, err := records.Parse(key)
		if err != nil {
			if !errors.Is(err, records.ErrKey) {
				t.Fatalf("Parse(%q): %v does not wrap ErrKey", key, err)
			}
			return
		}
		if k.String() != key {
			t.Fatalf("parsed %q as %q", key, k.String())
		}
		if id, ok := records.JobOf(key); ok != strings.HasPrefix(key, records.JobsPrefix+"/") || id != k.Job {
			t.Fatalf("JobOf(%q) = %s, %v; Parse: %+v", key, id, ok, k)
		}
		if (k.Type == records.CommitType || k.Type == records.ResultType) && records.CheckAuthor(key, k.Peer) != nil {
			t.Fatalf("owner refused on %q", key)
		}
	})
}
