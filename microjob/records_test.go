package microjob

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/jobs"
)

// sampleDisclosure returns a disclosure of three blocks and its commitment.
func sampleDisclosure(t testing.TB, proc string) (Disclosure, Commitment) {
	t.Helper()
	salt, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	d := Disclosure{
		Version: RecordVersion, JobID: sha256.Sum256([]byte("job")), MacroIndex: 7,
		MicroID: sha256.Sum256([]byte("micro")), Processor: proc, Wallet: walletOf(proc),
		BlockIndices: []uint64{3, 9, 12},
		BlockHashes:  [][32]byte{sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b")), sha256.Sum256([]byte("c"))},
		ResultCID:    rawCID(t, []byte("dir of "+proc)),
		Salt:         salt,
	}
	c, err := d.Commitment()
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

func TestRecordsRoundTripAndMatch(t *testing.T) {
	d, c := sampleDisclosure(t, newPeer(t))
	if err := d.Matches(c); err != nil {
		t.Fatal(err)
	}
	c2, err := DecodeCommitment(c.Encode())
	if err != nil || c2 != c {
		t.Fatalf("commitment round trip: %+v, %v", c2, err)
	}
	d2, err := DecodeDisclosure(d.Encode())
	if err != nil || !reflect.DeepEqual(d2, d) {
		t.Fatalf("disclosure round trip: %+v, %v", d2, err)
	}
	if !bytes.Contains(d.Encode(), []byte(`"result":"`+d.ResultCID.String()+`"`)) {
		t.Fatalf("unexpected encoding %s", d.Encode())
	}
	// Every field is bound: change any and the disclosure stops matching.
	mutations := map[string]func(*Disclosure){
		"hash":    func(x *Disclosure) { x.BlockHashes = [][32]byte{x.BlockHashes[0], x.BlockHashes[2], x.BlockHashes[1]} },
		"cid":     func(x *Disclosure) { x.ResultCID = rawCID(t, []byte("other")) },
		"salt":    func(x *Disclosure) { x.Salt[0] ^= 1 },
		"wallet":  func(x *Disclosure) { x.Wallet = walletOf("someone else") },
		"micro":   func(x *Disclosure) { x.MicroID[0] ^= 1 },
		"macro":   func(x *Disclosure) { x.MacroIndex++ },
		"job":     func(x *Disclosure) { x.JobID[0] ^= 1 },
		"proc":    func(x *Disclosure) { x.Processor = newPeer(t) },
		"version": func(x *Disclosure) { x.Version++ },
		"count":   func(x *Disclosure) { x.BlockHashes = x.BlockHashes[:2] },
	}
	for name, mutate := range mutations {
		x := d
		x.BlockHashes = append([][32]byte(nil), d.BlockHashes...)
		mutate(&x)
		if err := x.Matches(c); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s changed: err = %v, want ErrMismatch", name, err)
		}
	}
}

// TestCommitRevealStopsCopying: a processor that did not run the blocks
// must still commit before anyone discloses. Whatever it committed to, once
// it sees an honest disclosure it cannot produce a disclosure that both
// matches its own commitment and carries the honest hashes under its own
// wallet.
func TestCommitRevealStopsCopying(t *testing.T) {
	honestPeer, copierPeer := newPeer(t), newPeer(t)
	honest, honestCommit := sampleDisclosure(t, honestPeer)

	// Round one: the copier knows nothing yet and commits to a guess.
	guess := honest
	guess.Processor, guess.Wallet = copierPeer, walletOf(copierPeer)
	guess.BlockHashes = [][32]byte{{1}, {2}, {3}}
	guess.ResultCID = rawCID(t, []byte("guess"))
	guess.Salt, _ = NewSalt()
	copierCommit, err := guess.Commitment()
	if err != nil {
		t.Fatal(err)
	}
	// Or it copies the honest commitment value itself, as its own record.
	copiedCommit := honestCommit
	copiedCommit.Processor, copiedCommit.Wallet = copierPeer, walletOf(copierPeer)

	// Round two: the honest values are public; the copier reuses them with
	// its own name, wallet and a salt of its choice, or with the honest salt.
	for _, salt := range [][32]byte{guess.Salt, honest.Salt} {
		copied := honest
		copied.Processor, copied.Wallet, copied.Salt = copierPeer, walletOf(copierPeer), salt
		for name, c := range map[string]Commitment{"own guess": copierCommit, "copied commitment": copiedCommit} {
			if err := copied.Matches(c); !errors.Is(err, ErrMismatch) {
				t.Fatalf("copied disclosure matches the %s: %v", name, err)
			}
		}
	}
	// The only matching copy keeps the honest wallet: it pays the honest
	// processor, not the copier.
	copied := honest
	copied.Processor = copierPeer
	if err := copied.Matches(copiedCommit); !errors.Is(err, ErrMismatch) {
		t.Fatalf("copy with the honest wallet matched a commitment naming the copier's wallet: %v", err)
	}
	copiedCommit.Wallet = honest.Wallet
	if err := copied.Matches(copiedCommit); err != nil || copied.Wallet != walletOf(honestPeer) {
		t.Fatalf("wallet-preserving copy: %v", err)
	}
}

func TestDecodeRefusesBadRecords(t *testing.T) {
	d, c := sampleDisclosure(t, newPeer(t))
	ce, de := string(c.Encode()), string(d.Encode())
	cases := []struct {
		name string
		b    string
		want error
	}{
		{"commit too large", ce + strings.Repeat(" ", MaxCommitmentBytes), ErrTooLarge},
		{"commit unknown field", strings.Replace(ce, `{"version":1,`, `{"version":1,"extra":1,`, 1), ErrMalformed},
		{"commit version", strings.Replace(ce, `"version":1`, `"version":2`, 1), ErrVersion},
		{"commit whitespace", strings.Replace(ce, `,"macro"`, `, "macro"`, 1), ErrNonCanonical},
		{"commit key case", strings.Replace(ce, `"macro"`, `"Macro"`, 1), ErrNonCanonical},
		{"commit trailing", ce + "{}", ErrMalformed},
		{"commit upper hex", strings.Replace(ce, jobs.Hash(c.Commit).String(), strings.ToUpper(jobs.Hash(c.Commit).String()), 1), ErrMalformed},
		{"commit bad wallet", strings.Replace(ce, c.Wallet, "0x12", 1), ErrMalformed},
		{"commit bad peer", strings.Replace(ce, c.Processor, "nobody", 1), ErrMalformed},
		{"disclosure not json", "nope", ErrMalformed},
		{"disclosure too large", de + strings.Repeat(" ", MaxDisclosureBytes), ErrTooLarge},
		{"disclosure count", strings.Replace(de, `"blocks":[3,9,12]`, `"blocks":[3,9]`, 1), ErrMalformed},
		{"disclosure no blocks", strings.Replace(strings.Replace(de, `"blocks":[3,9,12]`, `"blocks":[]`, 1), `"hashes":[`+hashList(d)+`]`, `"hashes":[]`, 1), ErrMalformed},
		{"disclosure bad cid", strings.Replace(de, d.ResultCID.String(), "bafyNOT", 1), ErrMalformed},
		{"disclosure duplicate key", strings.Replace(de, `"macro":7`, `"macro":7,"macro":7`, 1), ErrNonCanonical},
		{"disclosure number form", strings.Replace(de, `"macro":7`, `"macro":7.0`, 1), ErrMalformed},
	}
	for _, tc := range cases {
		var err error
		if strings.HasPrefix(tc.name, "commit") {
			_, err = DecodeCommitment([]byte(tc.b))
		} else {
			_, err = DecodeDisclosure([]byte(tc.b))
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func hashList(d Disclosure) string {
	var parts []string
	for _, h := range d.BlockHashes {
		parts = append(parts, `"`+jobs.Hash(h).String()+`"`)
	}
	return strings.Join(parts, ",")
}

const (
	vectorCID    = "bafkreifq2uofrsfzyh2fr6w7c3d5g5ldb32r3jg7qgivre5qlqh2j3mlyy"
	vectorCommit = "b67a7a618cf1774a44be6fb6eae8087945d60c10eccdef45f4e1d49c08708978"
)

func TestComputeCommitVector(t *testing.T) {
	// Fixed inputs; the expected value is recomputed here from the written
	// layout, byte by byte, so a change to either side is caught.
	hashes := [][32]byte{{0xaa}, {0xbb}}
	c := rawCID(t, []byte("vector"))
	var salt [32]byte
	salt[31] = 1
	var wallet [20]byte
	wallet[0] = 0xee
	pre := []byte("jobmesh/commit/v1")
	pre = append(pre, 0, 0, 0, 2)
	pre = append(pre, hashes[0][:]...)
	pre = append(pre, hashes[1][:]...)
	cb := c.Bytes()
	pre = append(pre, 0, 0, 0, byte(len(cb)))
	pre = append(pre, cb...)
	pre = append(pre, salt[:]...)
	pre = append(pre, wallet[:]...)
	if got, want := ComputeCommit(hashes, c, salt, wallet), sha256.Sum256(pre); got != want {
		t.Fatalf("commit %x, want %x", got, want)
	}
	// The same vector is written in the protocol document.
	if c.String() != vectorCID || jobs.Hash(ComputeCommit(hashes, c, salt, wallet)).String() != vectorCommit {
		t.Fatalf("vector changed: cid %s commit %x", c, ComputeCommit(hashes, c, salt, wallet))
	}
}

func FuzzDecodeCommitment(f *testing.F) {
	f.Add([]byte(`{"version":1,"job":"` + strings.Repeat("0", 64) + `","macro":0,"micro":"` + strings.Repeat("1", 64) +
		`","processor":"12D3KooWD5thwNMwmmUj6hsgVtbuwiwzdJhES6apABUC6Zhaqqyv","wallet":"0x` + strings.Repeat("2", 40) +
		`","commit":"` + strings.Repeat("3", 64) + `"}`))
	f.Add([]byte(`{}`))
	_, c := sampleDisclosure(f, newPeer(f))
	f.Add(c.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommitment(b)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Encode(), b) {
			t.Fatalf("accepted a non-canonical encoding %q", b)
		}
	})
}

func FuzzDecodeDisclosure(f *testing.F) {
	f.Add([]byte(`{"version":1,"job":"` + strings.Repeat("0", 64) + `","macro":0,"micro":"` + strings.Repeat("1", 64) +
		`","processor":"12D3KooWD5thwNMwmmUj6hsgVtbuwiwzdJhES6apABUC6Zhaqqyv","wallet":"0x` + strings.Repeat("2", 40) +
		`","blocks":[4],"hashes":["` + strings.Repeat("5", 64) + `"],"result":"bafkreibshkfc5tjeezlo3jd4jnrz4vvk7gzqjpjs3fxyn6h7yyjpgnfgai","salt":"` +
		strings.Repeat("6", 64) + `"}`))
	f.Add([]byte(`{"blocks":[1,2],"hashes":[]}`))
	d, _ := sampleDisclosure(f, newPeer(f))
	f.Add(d.Encode())
	f.Add(inlineSample(f).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDisclosure(b)
		if err != nil {
			return
		}
		if !bytes.Equal(d.Encode(), b) {
			t.Fatalf("accepted a non-canonical encoding %q", b)
		}
		if len(d.BlockIndices) != len(d.BlockHashes) || len(d.BlockIndices) == 0 || len(d.BlockIndices) > MaxRecordBlocks {
			t.Fatalf("accepted %d blocks, %d hashes", len(d.BlockIndices), len(d.BlockHashes))
		}
		size := 0
		for _, ib := range d.Inline {
			size += len(ib.RawData())
			if got, err := ib.Cid().Prefix().Sum(ib.RawData()); err != nil || !got.Equals(ib.Cid()) {
				t.Fatalf("accepted an inline block that does not hash to %s", ib.Cid())
			}
		}
		if len(d.Inline) > MaxInlineBlocks || size > MaxInlineBytes {
			t.Fatalf("accepted %d inline blocks of %d bytes", len(d.Inline), size)
		}
	})
}

// inlineSample is sampleDisclosure with two inline blocks.
func inlineSample(t testing.TB) Disclosure {
	t.Helper()
	d, _ := sampleDisclosure(t, newPeer(t))
	for _, data := range []string{"dir", "leaf"} {
		b, err := blocks.NewBlockWithCid([]byte(data), rawCID(t, []byte(data)))
		if err != nil {
			t.Fatal(err)
		}
		d.Inline = append(d.Inline, b)
	}
	return d
}

// TestInlineBlocks: inline result blocks round-trip and stay out of the
// commitment; a block whose bytes do not hash to its CID, a hash other
// than SHA-256, too many blocks or too many bytes are refused.
func TestInlineBlocks(t *testing.T) {
	d := inlineSample(t)
	got, err := DecodeDisclosure(d.Encode())
	if err != nil || len(got.Inline) != 2 || !got.Inline[1].Cid().Equals(d.Inline[1].Cid()) || string(got.Inline[1].RawData()) != "leaf" {
		t.Fatalf("round trip: %v, %+v", err, got.Inline)
	}
	plain := d
	plain.Inline = nil
	c1, _ := d.Commitment()
	c2, _ := plain.Commitment()
	if c1 != c2 {
		t.Fatal("inline blocks change the commitment")
	}
	enc := string(d.Encode())
	leaf := base64.StdEncoding.EncodeToString([]byte("leaf"))
	identity, _ := cid.V1Builder{Codec: cid.Raw, MhType: mh.IDENTITY}.Sum([]byte("leaf"))
	many := make([]inlineWire, MaxInlineBlocks+1)
	big := []inlineWire{{CID: rawCID(t, make([]byte, MaxInlineBytes+1)).String(), Data: make([]byte, MaxInlineBytes+1)}}
	encodeWith := func(ws []inlineWire) string {
		b, _ := json.Marshal(ws)
		return strings.Replace(enc, enc[strings.Index(enc, `"inline":`):len(enc)-1], `"inline":`+string(b), 1)
	}
	for name, b := range map[string]string{
		"wrong bytes": strings.Replace(enc, leaf, base64.StdEncoding.EncodeToString([]byte("fake")), 1),
		"identity":    strings.Replace(enc, d.Inline[1].Cid().String(), identity.String(), 1),
		"bad cid":     strings.Replace(enc, d.Inline[1].Cid().String(), "bafyNOT", 1),
		"many blocks": encodeWith(many),
		"too big":     encodeWith(big),
	} {
		if _, err := DecodeDisclosure([]byte(b)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}
