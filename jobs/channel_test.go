package jobs

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChannelMessages(t *testing.T) {
	job := validJob()
	id := job.ID().String()
	good := []ChannelMsg{
		{Kind: KindJob, Job: job.Encode()},
		{Kind: KindQuery},
		{Kind: KindProgress, JobID: id, MicroID: id, Processor: "peerA"},
		{Kind: KindRoom, JobID: id, Macro: 3, Processor: "peerA", Open: 4},
		{Kind: KindRooms, JobID: id},
		{Kind: KindFinalizing, JobID: id, Processor: "peerA"},
		Progress(id, "peerA", []string{id, strings.Repeat("ab", 32)}),
	}
	for _, m := range good {
		b, err := EncodeChannelMsg(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeChannelMsg(b)
		if err != nil || got.Kind != m.Kind || got.JobID != m.JobID || got.Macro != m.Macro {
			t.Fatalf("%s: %v %+v", m.Kind, err, got)
		}
	}
	bad := map[string]string{
		"version":                 `{"v":2,"kind":"query"}`,
		"kind":                    `{"v":1,"kind":"gossip"}`,
		"unknown field":           `{"v":1,"kind":"query","x":1}`,
		"progress no id":          `{"v":1,"kind":"progress","micro_id":"` + id + `","processor":"p"}`,
		"progress both":           `{"v":1,"kind":"progress","job_id":"` + id + `","micro_id":"` + id + `","micro_ids":["` + id + `","` + id + `"],"processor":"p"}`,
		"progress one of many":    `{"v":1,"kind":"progress","job_id":"` + id + `","micro_ids":["` + id + `"],"processor":"p"}`,
		"progress empty list":     `{"v":1,"kind":"progress","job_id":"` + id + `","micro_ids":[],"processor":"p"}`,
		"progress bad id in list": `{"v":1,"kind":"progress","job_id":"` + id + `","micro_ids":["` + id + `","xyz"],"processor":"p"}`,
		"progress too many":       `{"v":1,"kind":"progress","job_id":"` + id + `","micro_ids":["` + strings.TrimSuffix(strings.Repeat(id+`","`, MaxProgressMicros+1), `","`) + `"],"processor":"p"}`,
		"room no owner":           `{"v":1,"kind":"room","job_id":"` + id + `"}`,
		"finalizing no processor": `{"v":1,"kind":"finalizing","job_id":"` + id + `"}`,
		"finalizing no id":        `{"v":1,"kind":"finalizing","processor":"p"}`,
		"job not canon":           `{"v":1,"kind":"job","job":"e30="}`,
		"trailing":                `{"v":1,"kind":"query"}{}`,
		"oversized":               `{"v":1,"kind":"query","job_id":"` + strings.Repeat("a", MaxChannelMsg) + `"}`,
	}
	for name, in := range bad {
		if _, err := DecodeChannelMsg([]byte(in)); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s: got %v, want ErrBadMessage", name, err)
		}
	}
	// One MicroJob goes as micro_id, which every version reads; more as
	// micro_ids.
	if one := Progress(id, "peerA", []string{id}); one.MicroID != id || one.MicroIDs != nil || !slices.Equal(one.Micros(), []string{id}) {
		t.Fatalf("progress of one: %+v", one)
	}
	two := []string{id, strings.Repeat("ab", 32)}
	b, err := EncodeChannelMsg(Progress(id, "peerA", two))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := DecodeChannelMsg(b); err != nil || m.MicroID != "" || !slices.Equal(m.Micros(), two) {
		t.Fatalf("progress of two: %v %+v", err, m)
	}
	if err := CheckSender("peerB", good[2]); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("progress claimed for another peer: %v", err)
	}
	if err := CheckSender("peerA", good[3]); err != nil {
		t.Fatal(err)
	}
	if err := CheckSender("peerB", good[5]); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("finalizing claimed for another peer: %v", err)
	}
}

func FuzzDecodeChannelMsg(f *testing.F) {
	job := validJob()
	for _, m := range []ChannelMsg{{Kind: KindJob, Job: job.Encode()}, {Kind: KindQuery}, {Kind: KindRooms, JobID: job.ID().String()}, {Kind: KindFinalizing, JobID: job.ID().String(), Processor: "p"},
		Progress(job.ID().String(), "p", []string{job.ID().String()}), Progress(job.ID().String(), "p", []string{job.ID().String(), job.ID().String()})} {
		b, _ := EncodeChannelMsg(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := DecodeChannelMsg(in)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error %v does not wrap ErrBadMessage", err)
			}
			return
		}
		b, err := EncodeChannelMsg(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeChannelMsg(b); err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
	})
}

// TestQueriesAnsweredOncePerWindow: however many queries for open jobs
// come, a node answers at most one per window.
func TestQueriesAnsweredOncePerWindow(t *testing.T) {
	q := QueryAnswers{Window: time.Second}
	t0 := time.Unix(1000, 0)
	answered := 0
	for i := range 3000 { // a query every millisecond for three seconds
		if q.Due(t0.Add(time.Duration(i) * time.Millisecond)) {
			answered++
		}
	}
	if answered != 3 {
		t.Fatalf("%d answers to 3,000 queries in three windows, want 3", answered)
	}
	if !q.Due(t0.Add(time.Hour)) {
		t.Fatal("a query a window after the last answer is not answered")
	}
}
