package records_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/records"
)

// FuzzDecodeRequest: whatever the dispute, check, redo and re-run
// decoders accept is within MaxRecord and encodes back to a record they
// accept again as the same; whatever they refuse wraps ErrBadRecord.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"dispute":{"macro":0,"block":3,"micros":["a","b"],"processors":["p","q"],"hashes":["",""]},"third":"r"}`))
	f.Add([]byte(`{"block":3,"processor":"p","hash":"00","thirds":["q","r"],"dropped":["s"],"exhausted":true}`))
	f.Add([]byte(`{"micro":"` + strings.Repeat("a", 64) + `","exclude":["p"]}`))
	f.Add([]byte(`{"block":3,"hash":"00","processor":"p"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		check(t, b, records.DecodeDispute)
		check(t, b, records.DecodeCheck)
		check(t, b, records.DecodeRedo)
		check(t, b, records.DecodeRerun)
	})
}

func check[T any](t *testing.T, b []byte, decode func([]byte) (T, error)) {
	t.Helper()
	v, err := decode(b)
	if err != nil {
		if !errors.Is(err, records.ErrBadRecord) {
			t.Fatalf("error does not wrap ErrBadRecord: %v", err)
		}
		return
	}
	if len(b) > records.MaxRecord {
		t.Fatalf("accepted %d bytes", len(b))
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := decode(again)
	if err != nil {
		t.Fatalf("%s does not decode again: %v", again, err)
	}
	if again2, _ := json.Marshal(v2); string(again2) != string(again) {
		t.Fatalf("%s decodes as %s", again, again2)
	}
}

// TestRequestContentRules: a dispute's third is neither side nor dropped;
// a check's two re-runners are distinct and neither is the checked
// processor.
func TestRequestContentRules(t *testing.T) {
	var d records.Dispute
	d.Dispute.Processors = [2]string{"p", "q"}
	for third, want := range map[string]bool{"r": true, "p": false, "q": false, "": false, "s": false} {
		d.Third, d.Dropped = third, []string{"s"}
		if d.Valid() != want {
			t.Errorf("dispute with third %q: valid %v", third, !want)
		}
	}
	for thirds, want := range map[[2]string]bool{{"q", "r"}: true, {"q", "q"}: false, {"p", "r"}: false, {"q", ""}: false} {
		c := records.Check{Processor: "p", Thirds: thirds}
		if c.Valid() != want {
			t.Errorf("check by %v: valid %v", thirds, !want)
		}
	}
}
