package records_test

import (
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

func TestJobAbortedRecord(t *testing.T) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	rec := records.NewJobAborted(id)
	b := []byte(`{"version":1,"job":"` + id.String() + `","reason":"queue-full"}`)
	got, err := records.DecodeJobAborted(records.AbortedKey(id), b)
	if err != nil || got != rec {
		t.Fatalf("decode: %+v, %v; want %+v", got, err, rec)
	}
	other := jobs.ID(sha256.Sum256([]byte("other")))
	for name, c := range map[string]struct{ key, payload string }{
		"other key":     {records.AbortedKey(other), string(b)},
		"bad version":   {records.AbortedKey(id), `{"version":2,"job":"` + id.String() + `","reason":"queue-full"}`},
		"bad reason":    {records.AbortedKey(id), `{"version":1,"job":"` + id.String() + `","reason":"bored"}`},
		"bad job":       {records.AbortedKey(id), `{"version":1,"job":"zz","reason":"queue-full"}`},
		"unknown field": {records.AbortedKey(id), `{"version":1,"job":"` + id.String() + `","reason":"queue-full","x":1}`},
		"trailing":      {records.AbortedKey(id), string(b) + "{}"},
	} {
		if _, err := records.DecodeJobAborted(c.key, []byte(c.payload)); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("%s: %v, want ErrBadRecord", name, err)
		}
	}
}

func FuzzDecodeJobAborted(f *testing.F) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	f.Add(records.AbortedKey(id), []byte(`{"version":1,"job":"`+id.String()+`","reason":"queue-full"}`))
	f.Add("/jobs/x/aborted", []byte(`{}`))
	f.Fuzz(func(t *testing.T, key string, b []byte) {
		a, err := records.DecodeJobAborted(key, b)
		if err != nil {
			return
		}
		// What decodes is exactly the record its key names.
		h, perr := jobs.ParseHash(a.Job)
		if perr != nil || records.AbortedKey(h) != key || a != records.NewJobAborted(h) {
			t.Fatalf("accepted %+v under %q", a, key)
		}
	})
}
