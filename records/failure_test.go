package records_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/wasm"
)

func TestFailureOf(t *testing.T) {
	for _, c := range []struct {
		err    error
		kind   string
		code   uint32
		stderr string
	}{
		{fmt.Errorf("microjob: block 0: %w", fmt.Errorf("%w: invalid magic number", wasm.ErrInvalidModule)), records.FailInvalidModule, 0, ""},
		{fmt.Errorf("block 1: %w", &wasm.ExitError{Code: 3, Stderr: "bad input\n"}), records.FailExit, 3, "bad input\n"},
		{fmt.Errorf("%w: after 30s", wasm.ErrTimeout), records.FailTimeout, 0, ""},
		{fmt.Errorf("%w: growth refused", wasm.ErrMemoryLimit), records.FailMemoryLimit, 0, ""},
		{fmt.Errorf("%w: more than 1 bytes", wasm.ErrOutputTooLarge), records.FailOutputTooLarge, 0, ""},
		{fmt.Errorf("%w: unreachable", wasm.ErrTrap), records.FailTrap, 0, ""},
		{fmt.Errorf("%w: %w", wasm.ErrCanceled, errors.New("ctx")), "", 0, ""},
		{wasm.ErrClosed, "", 0, ""},
		{errors.New("fetching code: no provider"), "", 0, ""},
		{nil, "", 0, ""},
	} {
		f, ok := records.FailureOf(c.err)
		if ok != (c.kind != "") || f.Kind != c.kind || f.ExitCode != c.code || f.Stderr != c.stderr {
			t.Errorf("FailureOf(%v) = %+v, %v; want kind %q code %d stderr %q", c.err, f, ok, c.kind, c.code, c.stderr)
		}
	}
	// A long stderr is cut to the limit, at a rune boundary.
	long := strings.Repeat("é", records.MaxFailureStderr)
	f, _ := records.FailureOf(&wasm.ExitError{Code: 1, Stderr: long})
	if len(f.Stderr) > records.MaxFailureStderr || !strings.HasPrefix(long, f.Stderr) || len(f.Stderr) < records.MaxFailureStderr-1 {
		t.Fatalf("stderr of %d bytes kept as %d", len(long), len(f.Stderr))
	}
}

func TestFailureReportRoundTrip(t *testing.T) {
	id, micro := jobs.ID(sha256.Sum256([]byte("job"))), jobs.ID(sha256.Sum256([]byte("micro")))
	p := newPeer(t).String()
	rep := records.NewFailureReport(id, micro, records.Failure{Kind: records.FailExit, ExitCode: 2, Stderr: "oops"})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	key := records.FailureKey(id, p)
	got, err := records.DecodeFailure(key, p, b)
	if err != nil || got != rep {
		t.Fatalf("DecodeFailure = %+v, %v; want %+v", got, err, rep)
	}
	k, err := records.Parse(key)
	if err != nil || k.Type != records.FailureType || k.Peer != p || k.Job != id {
		t.Fatalf("Parse(%q) = %+v, %v", key, k, err)
	}
	other := newPeer(t)
	if _, err := records.DecodeFailure(key, other.String(), b); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("a report under another peer's key decoded: %v", err)
	}
	// The store's author rule: only the peer the key names writes it.
	if err := records.AuthorPolicy()(key, other); err == nil {
		t.Fatalf("AuthorPolicy let %s write %q", other, key)
	}
	if err := records.AuthorPolicy()(key, newPeerOf(t, p)); err != nil {
		t.Fatalf("AuthorPolicy refused the key's own peer: %v", err)
	}
	for name, bad := range map[string]string{
		"kind":     `{"version":1,"job":"` + id.String() + `","micro":"` + micro.String() + `","kind":"slow"}`,
		"no-kind":  `{"version":1,"job":"` + id.String() + `","micro":"` + micro.String() + `","kind":"no-eligible-processor"}`,
		"code":     `{"version":1,"job":"` + id.String() + `","micro":"` + micro.String() + `","kind":"trap","exitCode":1}`,
		"version":  `{"version":2,"job":"` + id.String() + `","micro":"` + micro.String() + `","kind":"trap"}`,
		"micro":    `{"version":1,"job":"` + id.String() + `","micro":"xyz","kind":"trap"}`,
		"unknown":  `{"version":1,"job":"` + id.String() + `","micro":"` + micro.String() + `","kind":"trap","x":1}`,
		"stderr":   `{"version":1,"job":"` + id.String() + `","micro":"` + micro.String() + `","kind":"trap","stderr":"` + strings.Repeat("a", records.MaxFailureStderr+1) + `"}`,
		"trailing": `{"version":1,"job":"` + id.String() + `","micro":"` + micro.String() + `","kind":"trap"} {}`,
	} {
		if _, err := records.DecodeFailure(key, p, []byte(bad)); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("%s: decoded %s: %v", name, bad, err)
		}
	}
}

func FuzzDecodeFailure(f *testing.F) {
	id, micro := jobs.ID(sha256.Sum256([]byte("job"))), jobs.ID(sha256.Sum256([]byte("micro")))
	const p = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"
	f.Add(records.FailureKey(id, p), p, []byte(`{"version":1,"job":"`+id.String()+`","micro":"`+micro.String()+`","kind":"exit","exitCode":1,"stderr":"x"}`))
	f.Add("/jobs/x/failure/y", "y", []byte(`{}`))
	f.Fuzz(func(t *testing.T, key, author string, b []byte) {
		r, err := records.DecodeFailure(key, author, b)
		if err != nil {
			return
		}
		// What decodes names its key's job, a kind of the list, and
		// keeps to the stderr limit.
		h, perr := jobs.ParseHash(r.Job)
		if perr != nil || records.FailureKey(h, author) != key || len(r.Stderr) > records.MaxFailureStderr {
			t.Fatalf("accepted %+v under %q by %q", r, key, author)
		}
		if r.Kind != records.FailExit && r.ExitCode != 0 {
			t.Fatalf("exit code on kind %q", r.Kind)
		}
	})
}
