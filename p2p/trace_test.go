package p2p

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/internal/wait"
)

func TestTopicKind(t *testing.T) {
	for topic, want := range map[string]string{
		"/jobmesh/2/crdt":                     "crdt",
		"/jobmesh/2/jobs":                     "jobs",
		"/jobmesh/2/job/bafyjob":              "job",
		"/jobmesh/2/job/bafyjob/macro/12":     "macrojob",
		"/jobmesh/2/job/bafyjob/crdt":         "jobcrdt",
		"/jobmesh/2/job/bafyjob/macro/3/crdt": "roomcrdt",
		"/jobmesh/2/greetings":                "other",
		"/other/1/crdt":                       "other",
		"":                                    "other",
	} {
		if got := topicKindNames[topicKind(topic)]; got != want {
			t.Errorf("topicKind(%q) = %q, want %q", topic, got, want)
		}
	}
}

// TestTrafficIsCountedByTopicKind: a message published on a Job channel
// is counted as sent by its author and delivered by its reader, under
// the topic kind "job".
func TestTrafficIsCountedByTopicKind(t *testing.T) {
	a, b := newTestHost(t, nil), newTestHost(t, nil)
	connect(t, a, b)
	ta, err := Join(a, greetingTopic("job/bafyjob"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Join(b, greetingTopic("job/bafyjob"))
	if err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 10*time.Second, func() error {
		if len(ta.Peers()) < 1 || len(tb.Peers()) < 1 {
			return fmt.Errorf("topic peers a=%d b=%d", len(ta.Peers()), len(tb.Peers()))
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ta.Publish(ctx, greeting{Author: a.ID().String(), Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(b.metrics.traffic.WithLabelValues("job", "delivered")); got != 1 {
		t.Fatalf("b delivered %v job messages, want 1", got)
	}
	if got := testutil.ToFloat64(a.metrics.traffic.WithLabelValues("job", "sent")); got != 1 {
		t.Fatalf("a sent %v job messages, want 1", got)
	}
	if got := testutil.ToFloat64(b.metrics.traffic.WithLabelValues("other", "delivered")); got != 0 {
		t.Fatalf("b delivered %v messages of kind other, want 0", got)
	}
}
