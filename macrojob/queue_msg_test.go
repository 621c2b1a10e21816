package macrojob

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
)

func sampleSnapshot() *Snapshot {
	return &Snapshot{
		Room:    "job1/macro0",
		Items:   ItemsDigest([]ID{"m1", "m2", "m3"}),
		Clock:   Clock{Term: 2, Leader: "peerB", Counter: 7},
		Owner:   "peerC",
		Author:  "peerB",
		Members: []PeerID{"peerA", "peerB", "peerC", "peerD"},
		Pending: []PeerID{"peerD", "peerA"},
		States: []ItemLock{
			{State: Processed},
			{State: Locked, Holder: "peerB", Expiry: 1795309200000000000},
			{State: Open},
		},
	}
}

func sampleMsgs() []Msg {
	return []Msg{
		&Request{Room: "job1/macro0"},
		&Result{Room: "job1/macro0", ID: "m2"},
		sampleSnapshot(),
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, m := range sampleMsgs() {
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("encode %s: %v", describe(m), err)
		}
		d, err := Decode(b)
		if err != nil {
			t.Fatalf("decode %s: %v", describe(m), err)
		}
		if !equalMsg(m, d) {
			t.Errorf("round trip changed %s into %s", describe(m), describe(d))
		}
	}
}

// TestWireVectors pins the v1 encoding: testdata/wire_v1.txt holds
// "kind hex" lines for the sample messages. Run with -update to rewrite.
func TestWireVectors(t *testing.T) {
	var got strings.Builder
	for _, m := range sampleMsgs() {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(m.Kind().String() + " " + hex.EncodeToString(b) + "\n")
	}
	const path = "testdata/wire_v1.vectors"
	if *update {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("wire encoding changed:\n got %s\nwant %s", got.String(), want)
	}
}

func TestDecodeRejects(t *testing.T) {
	good, err := Encode(sampleSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	bigCount := []byte{WireVersion, byte(KindSnapshot)}
	bigCount = appendString(bigCount, "room")
	bigCount = append(bigCount, make([]byte, 32)...)
	bigCount = binary.AppendUvarint(bigCount, 1)
	bigCount = appendString(bigCount, "L")
	bigCount = binary.AppendUvarint(bigCount, 0)
	bigCount = binary.AppendUvarint(bigCount, 1<<40) // members
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"version only", []byte{WireVersion}, ErrMalformed},
		{"future version", []byte{2, byte(KindRequest), 1, 'r'}, ErrVersion},
		{"unknown kind", []byte{WireVersion, 9, 1, 'r'}, ErrMalformed},
		{"too large", make([]byte, MaxMsgSize+1), ErrTooLarge},
		{"trailing bytes", append(bytes.Clone(good), 0), ErrMalformed},
		{"truncated", good[:len(good)-1], ErrMalformed},
		{"empty room", []byte{WireVersion, byte(KindRequest), 0}, ErrMalformed},
		{"room too long", append([]byte{WireVersion, byte(KindRequest)}, binary.AppendUvarint(nil, MaxIDLen+1)...), ErrMalformed},
		{"huge member count", bigCount, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.in)
			if !errors.Is(err, c.want) {
				t.Fatalf("Decode = %v, %v; want %v", m, err, c.want)
			}
		})
	}
}

func TestSnapshotValidate(t *testing.T) {
	cases := map[string]func(s *Snapshot){
		"owner not member":       func(s *Snapshot) { s.Owner = "stranger" },
		"author not member":      func(s *Snapshot) { s.Author = "stranger" },
		"duplicate member":       func(s *Snapshot) { s.Members[1] = s.Members[0] },
		"pending owner":          func(s *Snapshot) { s.Pending = []PeerID{s.Owner} },
		"pending twice":          func(s *Snapshot) { s.Pending = []PeerID{"peerA", "peerA"} },
		"pending not member":     func(s *Snapshot) { s.Pending = []PeerID{"stranger"} },
		"holder not member":      func(s *Snapshot) { s.States[1].Holder = "stranger" },
		"open with holder":       func(s *Snapshot) { s.States[2].Holder = "peerA" },
		"processed with expiry":  func(s *Snapshot) { s.States[0].Expiry = 5 },
		"bad state":              func(s *Snapshot) { s.States[0].State = 7 },
		"no items":               func(s *Snapshot) { s.States = nil },
		"term zero":              func(s *Snapshot) { s.Clock.Term = 0 },
		"no leader":              func(s *Snapshot) { s.Clock.Leader = "" },
		"empty member":           func(s *Snapshot) { s.Members[3] = "" },
		"member name over limit": func(s *Snapshot) { s.Members[3] = PeerID(strings.Repeat("x", MaxIDLen+1)) },
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			s := sampleSnapshot()
			breakIt(s)
			if err := s.Validate(); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Validate = %v, want ErrMalformed", err)
			}
			if _, err := Encode(s); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Encode = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestClockOrder(t *testing.T) {
	// Listed from oldest to newest.
	order := []Clock{
		{},
		{Term: 1, Leader: "b", Counter: 0},
		{Term: 1, Leader: "b", Counter: 9},
		{Term: 1, Leader: "a", Counter: 0}, // same term, lower leader wins
		{Term: 1, Leader: "a", Counter: 3},
		{Term: 2, Leader: "z", Counter: 0}, // a higher term wins outright
	}
	for i := range order {
		for j := range order {
			got := order[i].Compare(order[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("%s.Compare(%s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the decoder: it never panics, and what
// it accepts encodes again and decodes to the same message.
func FuzzDecode(f *testing.F) {
	for _, m := range sampleMsgs() {
		b, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{WireVersion, byte(KindSnapshot)})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			if m != nil {
				t.Fatalf("Decode returned a message and %v", err)
			}
			return
		}
		again, err := Encode(m)
		if err != nil {
			t.Fatalf("decoded %s does not encode: %v", describe(m), err)
		}
		m2, err := Decode(again)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", describe(m), err)
		}
		if !equalMsg(m, m2) {
			t.Fatalf("round trip changed %s into %s", describe(m), describe(m2))
		}
	})
}

func equalMsg(a, b Msg) bool {
	switch a := a.(type) {
	case *Request:
		b, ok := b.(*Request)
		return ok && *a == *b
	case *Result:
		b, ok := b.(*Result)
		return ok && *a == *b
	case *Snapshot:
		b, ok := b.(*Snapshot)
		return ok && equalSnapshot(a, b)
	}
	return false
}
